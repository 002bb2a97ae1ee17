package results

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestCutOnCharacters: the text shown and every page end on a character's
// boundary, never more than the budget, and the pages add up to the text.
func TestCutOnCharacters(t *testing.T) {
	text := strings.Repeat("aé€😀", 500) // 1, 2, 3 and 4 bytes
	res, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}, "isError": true})
	for budget := 1024; budget < 1040; budget++ {
		over := Measure(res, budget)
		if over == nil {
			t.Fatalf("budget %d: %d bytes of text not over it", budget, len(text))
		}
		var cut struct {
			Content []struct{ Type, Text string }
			IsError bool
		}
		if err := json.Unmarshal(over.Cut(Link{URI: "mcptrunk://trunk/results/x", For: time.Minute}), &cut); err != nil || len(cut.Content) != 3 {
			t.Fatalf("budget %d: %+v %v", budget, cut, err)
		}
		shown := cut.Content[0].Text
		if len(shown) > budget || len(shown) < budget-3 || !utf8.ValidString(shown) || !strings.HasPrefix(text, shown) || !cut.IsError {
			t.Errorf("budget %d: shown %d bytes, valid %v, isError %v", budget, len(shown), utf8.ValidString(shown), cut.IsError)
		}
		var all strings.Builder
		w := over.Whole()
		for p := range pages(w.document(), budget) {
			if len(p) > budget || !utf8.ValidString(p) {
				t.Errorf("budget %d: a page of %d bytes, valid %v", budget, len(p), utf8.ValidString(p))
			}
			all.WriteString(p)
		}
		if all.String() != text {
			t.Errorf("budget %d: the pages are not the text", budget)
		}
	}
}

// TestMeasureWithin: a result within its budget, a budget of 0, and a
// result that is no CallToolResult are not cut.
func TestMeasureWithin(t *testing.T) {
	small := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}]}`)
	for _, c := range []struct {
		res    json.RawMessage
		budget int
	}{{small, 1024}, {small, 0}, {json.RawMessage(`{"task":{"taskId":"` + strings.Repeat("t", 2000) + `"}}`), 1024}} {
		if Measure(c.res, c.budget) != nil {
			t.Errorf("%.40s under %d: cut", c.res, c.budget)
		}
	}
	// The text alone is under the budget, the escaping of the JSON is not
	// what reaches the model.
	quoted := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat(`\"`, 1000) + `"}]}`)
	if Measure(quoted, 1024) != nil {
		t.Error("1000 quotes are over a budget of 1024")
	}
}

// TestCutItems: an item that is not text is shown only whole, and within
// what the text left; the others are left out, counted in the note, and
// read back from the whole, an image as a blob.
func TestCutItems(t *testing.T) {
	img := `{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("QUFB", 100) + `"}`
	big := `{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("QkJC", 1000) + `"}`
	res := json.RawMessage(`{"content":[` + img + `,{"type":"text","text":"` + strings.Repeat("y", 3000) + `"},` + big + `],"_meta":{"k":1}}`)
	over := Measure(res, 1024)
	if over == nil {
		t.Fatal("not over")
	}
	cut := string(over.Cut(Link{URI: "u", For: time.Minute, ReadTool: "mcp__trunk__read_resource"}))
	if !strings.Contains(cut, img) || strings.Contains(cut, "QkJC") || !strings.Contains(cut, `"_meta":{"k":1}`) {
		t.Errorf("cut: %.300s", cut)
	}
	if !strings.Contains(cut, "1 of its content items that are not text") || !strings.Contains(cut, "with the tool mcp__trunk__read_resource") {
		t.Errorf("the note: %s", cut)
	}
	if strings.Contains(cut, "isError") {
		t.Errorf("a result without structuredContent marked isError: %.300s", cut)
	}
	read, err := Read("u", over.Whole(), 0)
	if err != nil || !strings.Contains(string(read), `{"blob":"`+strings.Repeat("QkJC", 1000)+`","mimeType":"image/png","uri":"u"}`) {
		t.Errorf("read: %.300s %v", read, err)
	}
	if _, _, ok, err := Parse("results/abc?page=x"); !ok || err == nil {
		t.Errorf("?page=x: %v %v", ok, err)
	}
	if id, page, ok, err := Parse("results/abc?page=3"); id != "abc" || page != 3 || !ok || err != nil {
		t.Errorf("?page=3: %q %d %v %v", id, page, ok, err)
	}
	if _, _, ok, _ := Parse("status"); ok {
		t.Error("the status resource parsed as a kept result")
	}
}

// TestStoreBounds: one owner's wholes are bounded (its oldest go first,
// no one else's), all owners' are (the oldest of all goes first), a
// whole expires after TTL, another owner finds nothing, Drop forgets an
// owner's, and one too large is not kept.
func TestStoreBounds(t *testing.T) {
	now := time.Unix(0, 0)
	s := NewStore[string](&Options{MaxBytes: 3000, MaxOwnerBytes: 2000, TTL: time.Minute, Now: func() time.Time { return now }})
	whole := func(n int) Whole { return Whole{Text: strings.Repeat("z", n), Budget: 100} }
	keep := func(owner string, n int) string {
		id, ok := s.Keep(owner, whole(n))
		if !ok {
			t.Fatalf("%s's %d bytes not kept", owner, n)
		}
		return id
	}
	has := func(owner, id string) bool { _, ok := s.Get(owner, id); return ok }
	a1, b1 := keep("a", 800), keep("b", 800)
	a2 := keep("a", 800)
	a3 := keep("a", 800) // a's 2400 > 2000: a1 goes
	if has("a", a1) || !has("a", a2) || !has("a", a3) || !has("b", b1) {
		t.Errorf("per owner: a1 %v a2 %v a3 %v b1 %v", has("a", a1), has("a", a2), has("a", a3), has("b", b1))
	}
	if has("b", a2) || has("a", b1) {
		t.Error("one owner found another's")
	}
	c1 := keep("c", 800) // all: 3200 > 3000: b1, the oldest, goes
	if has("b", b1) || !has("c", c1) {
		t.Errorf("in all: b1 %v c1 %v", has("b", b1), has("c", c1))
	}
	if bytes, n := s.Bytes(); bytes != 2400 || n != 3 {
		t.Errorf("kept %d bytes in %d", bytes, n)
	}
	if _, ok := s.Keep("d", whole(2001)); ok {
		t.Error("a whole over an owner's bound kept")
	}
	s.Drop("a")
	if has("a", a2) || has("a", a3) || !has("c", c1) {
		t.Error("Drop")
	}
	now = now.Add(time.Minute)
	if has("c", c1) {
		t.Error("kept past its TTL")
	}
	if bytes, n := s.Bytes(); bytes != 0 || n != 0 {
		t.Errorf("after the TTL: %d bytes in %d", bytes, n)
	}
}

// TestCutStructured: a structuredContent over what the budget leaves is
// left out whole, never cut; the result is marked isError only for a tool
// with an output schema, and a result that is an error stays one.
func TestCutStructured(t *testing.T) {
	sc := `{"rows":"` + strings.Repeat("r", 2000) + `"}`
	for _, c := range []struct {
		isError, schema, want bool
	}{{false, false, false}, {false, true, true}, {true, true, true}, {true, false, true}} {
		res := json.RawMessage(`{"content":[{"type":"text","text":"rows"}],"structuredContent":` + sc + `,"isError":` + map[bool]string{true: "true", false: "false"}[c.isError] + `}`)
		over := Measure(res, 1024)
		if over == nil {
			t.Fatal("not over")
		}
		var cut struct {
			Content    []struct{ Text string }
			Structured json.RawMessage `json:"structuredContent"`
			IsError    bool
		}
		if err := json.Unmarshal(over.Cut(Link{URI: "u", For: time.Minute, OutputSchema: c.schema}), &cut); err != nil {
			t.Fatal(err)
		}
		if cut.Structured != nil || cut.IsError != c.want || cut.Content[0].Text != "rows" || !strings.Contains(cut.Content[1].Text, "structuredContent (2011 bytes) is left out") {
			t.Errorf("isError %v, schema %v: %+v", c.isError, c.schema, cut)
		}
		if said := strings.Contains(cut.Content[1].Text, "marked as an error only because"); said != (c.schema && !c.isError) {
			t.Errorf("isError %v, schema %v: the note says why it is an error: %v", c.isError, c.schema, said)
		}
	}
}
