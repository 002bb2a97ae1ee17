package naming

import (
	"strings"
	"testing"
)

func TestTemplateMatches(t *testing.T) {
	for _, tc := range []struct {
		tpl      string
		match    []string
		mismatch []string
	}{
		{"demo://resource/dynamic/text/{resourceId}",
			[]string{"demo://resource/dynamic/text/5", "demo://resource/dynamic/text/", "demo://resource/dynamic/text/a%2Fb"},
			[]string{"demo://resource/dynamic/blob/5", "demo://resource/dynamic/text/5/6", "demo://resource/dynamic/text/5?x", "xdemo://resource/dynamic/text/5"}},
		{"test://template/{id}/data",
			[]string{"test://template/42/data"},
			[]string{"test://template/42/data/more", "test://template/4/2/data"}},
		{"file:///{+path}", []string{"file:///a/b/c.txt", "file:///"}, []string{"file://host/a"}},
		{"search://q{?query,limit}", []string{"search://q", "search://q?query=a&limit=2"}, []string{"search://x?query=a"}},
		{"repo://{owner}/{name}#{frag}", []string{"repo://a/b#c"}, []string{"repo://a/b/c#d"}},
		{"a.b*c://literal", []string{"a.b*c://literal"}, []string{"aXb*c://literal", "a.bbc://literal"}},
		{"notes://note/1", []string{"notes://note/1"}, []string{"notes://note/12", "notes://note/"}},
	} {
		tpl, err := ParseTemplate(tc.tpl)
		if err != nil {
			t.Fatalf("ParseTemplate(%q): %v", tc.tpl, err)
		}
		for _, u := range tc.match {
			if !tpl.Matches(u) {
				t.Errorf("%q does not match %q", tc.tpl, u)
			}
		}
		for _, u := range tc.mismatch {
			if tpl.Matches(u) {
				t.Errorf("%q matches %q", tc.tpl, u)
			}
		}
	}
	if (Template{}).Matches("") {
		t.Error("the zero Template matches")
	}
}

func TestParseTemplateErrors(t *testing.T) {
	for _, tpl := range []string{"demo://{id", "demo://id}", "demo://{}", "demo://{a{b}}"} {
		_, err := ParseTemplate(tpl)
		if err == nil || !strings.Contains(err.Error(), tpl) {
			t.Errorf("ParseTemplate(%q): %v, want an error naming the template", tpl, err)
		}
	}
}
