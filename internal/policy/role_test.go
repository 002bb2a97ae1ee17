package policy

import (
	"strings"
	"testing"
)

// A role matches the callers its expression does, fails closed when it
// cannot be evaluated, reads no item, and an absent one matches no one.
func TestRole(t *testing.T) {
	r, err := CompileRole(`"admin" in claims.?groups.orValue([]) || subject == "root@example.com"`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		caller Caller
		want   bool
	}{
		{Caller{Subject: "ada", Claims: map[string]any{"groups": []any{"admin"}}}, true},
		{Caller{Subject: "root@example.com"}, true},
		{Caller{Subject: "sam", Claims: map[string]any{"groups": []any{"support"}}}, false},
		{Caller{}, false},
	} {
		if got, err := r.Holds(c.caller); got != c.want || err != nil {
			t.Errorf("Holds(%+v) = %v, %v; want %v", c.caller, got, err, c.want)
		}
	}
	strict, err := CompileRole(`"admin" in claims.groups`)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := strict.Holds(Caller{Subject: "sam"}); got || err == nil {
		t.Errorf("a role over a missing claim: %v, %v; want false and the error", got, err)
	}
	for src, want := range map[string]string{
		`server == "notes"`: "undeclared reference to 'server'",
		`subject`:           "want a bool",
		`subject ==`:        "Syntax error",
	} {
		if _, err := CompileRole(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CompileRole(%q): %v, want an error saying %q", src, err, want)
		}
	}
	var none *Role
	if r, err := CompileRole(""); r != nil || err != nil {
		t.Errorf(`CompileRole("") = %v, %v; want nil`, r, err)
	}
	if got, err := none.Holds(Caller{Subject: "ada"}); got || err != nil {
		t.Errorf("an absent role matched: %v, %v", got, err)
	}
}
