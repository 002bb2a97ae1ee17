package tasks

import "testing"

func TestBinding(t *testing.T) {
	for _, c := range []struct {
		perRequest       bool
		session, subject string
		want             string
	}{
		{false, "sess-1", "ada", "sess-1"},    // an HTTP session: its id, whoever the caller
		{true, "req-9", "ada", "subject:ada"}, // a stateless request: its caller
		{true, "req-9", "", ""},               // a stateless request of no one: nothing
		{false, "", "", ""},                   // stdio
	} {
		if got := Binding(c.perRequest, c.session, c.subject); got != c.want {
			t.Errorf("Binding(%v, %q, %q) = %q, want %q", c.perRequest, c.session, c.subject, got, c.want)
		}
	}
}
