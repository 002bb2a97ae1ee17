package results

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// Whole is what a result over its budget keeps for its caller.
type Whole struct {
	// Text is the result's text content items, joined with a newline.
	Text string
	// Structured is its structuredContent; nil without one.
	Structured json.RawMessage
	// Others are its content items that are not text (images, audio,
	// embedded resources, links), as the server sent them.
	Others []json.RawMessage
	// Budget is the result's budget: the most bytes of one page.
	Budget int
}

// size is what the whole puts in the context: the bytes of its text, its
// structuredContent and its other items.
func (w Whole) size() int {
	n := len(w.Text) + len(w.Structured)
	for _, o := range w.Others {
		n += len(o)
	}
	return n
}

// document is what the pages of w read: the text, then the
// structuredContent.
func (w Whole) document() string {
	if len(w.Structured) == 0 {
		return w.Text
	}
	if w.Text == "" {
		return string(w.Structured)
	}
	return w.Text + "\n" + string(w.Structured)
}

// pages is how many pages of at most w.Budget bytes its text and
// structuredContent take.
func (w Whole) pages() int {
	n := 0
	for range pages(w.document(), w.Budget) {
		n++
	}
	return n
}

// pages yields doc in pieces of at most budget bytes, each ending on a
// character's boundary: one page, empty, for an empty doc.
func pages(doc string, budget int) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		if doc == "" {
			yield("")
			return
		}
		for doc != "" {
			n := prefix(doc, budget)
			if n == 0 { // a budget smaller than one character: take it whole
				_, n = utf8.DecodeRuneInString(doc)
			}
			if !yield(doc[:n]) {
				return
			}
			doc = doc[n:]
		}
	}
}

// prefix is the length of the longest prefix of s of at most n bytes that
// ends on a character's boundary.
func prefix(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// Over is a tool result over its budget, ready to be cut.
type Over struct {
	members map[string]json.RawMessage
	items   []json.RawMessage
	whole   Whole
}

// Whole is what the result keeps for its caller.
func (o *Over) Whole() Whole { return o.whole }

// Measure reads a tools/call result and says whether what it puts in the
// context (the text of its content, its structuredContent, its other
// items) is over budget; a result that is not, or that is not a
// CallToolResult (a task's creation), gives nil. A budget of 0 is none.
func Measure(res json.RawMessage, budget int) *Over {
	if budget <= 0 || len(res) <= budget {
		return nil // nothing in it can add up to more than its bytes
	}
	members, err := rawjson.Object(res)
	if err != nil {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(members["content"], &items) != nil {
		return nil
	}
	o := &Over{members: members, items: items, whole: Whole{Budget: budget}}
	if sc, ok := members["structuredContent"]; ok && string(sc) != "null" {
		o.whole.Structured = sc
	}
	var texts []string
	for _, it := range items {
		if text, ok := textOf(it); ok {
			texts = append(texts, text)
		} else {
			o.whole.Others = append(o.whole.Others, it)
		}
	}
	o.whole.Text = strings.Join(texts, "\n")
	if o.whole.size() <= budget {
		return nil
	}
	return o
}

// textOf is a content item's text when it is a text item.
func textOf(item json.RawMessage) (string, bool) {
	if typ, _ := rawjson.StringField(item, "type"); typ != "text" {
		return "", false
	}
	text, err := rawjson.StringField(item, "text")
	return text, err == nil
}

// Link is what a cut result says of its whole: where it is kept, for the
// note that tells the model how to read it, and what the tool declares.
type Link struct {
	// URI is the kept whole's; "" when it could not be kept.
	URI string
	// For is how long it is kept.
	For time.Duration
	// ReadTool is the name the caller knows the trunk's resource-reading
	// tool by; "" when it has none.
	ReadTool string
	// NotKept says why the whole is not kept, when URI is "".
	NotKept string
	// OutputSchema says the tool declares one. Hosts on the TypeScript
	// SDK refuse a result of such a tool without structuredContent unless
	// it is an error, so a cut that leaves structuredContent out marks the
	// result isError, and its note says why.
	OutputSchema bool
}

// Cut is the result the host gets instead: its members but content and
// structuredContent as the server sent them; structuredContent when it
// fits the budget whole, else left out (and the result marked isError
// when the tool has an output schema, Link.OutputSchema); the content
// items in their order
// within what remains of the budget, the text cut on a character's
// boundary and an item that is not text kept only whole; then a note
// saying what was left out and how to read it, and a resource_link to the
// whole (none when it could not be kept).
func (o *Over) Cut(link Link) json.RawMessage {
	w := o.whole
	left := w.Budget
	out := make(map[string]json.RawMessage, len(o.members))
	for k, v := range o.members {
		if k != "content" && k != "structuredContent" {
			out[k] = v
		}
	}
	structuredLeft := false
	if w.Structured != nil {
		if len(w.Structured) <= left {
			out["structuredContent"] = w.Structured
			left -= len(w.Structured)
		} else {
			structuredLeft = true
		}
	}
	var content []json.RawMessage
	shown, othersLeft := 0, 0
	for _, it := range o.items {
		text, isText := textOf(it)
		switch {
		case !isText && len(it) <= left:
			content = append(content, it)
			left -= len(it)
		case !isText:
			othersLeft++
		case left > 0:
			n := prefix(text, left)
			shown += n
			left -= n
			if n == len(text) {
				content = append(content, it)
			} else if n > 0 {
				content = append(content, textItem(text[:n]))
			}
		}
	}
	flagged := structuredLeft && link.OutputSchema && string(o.members["isError"]) != "true"
	if flagged {
		out["isError"] = json.RawMessage("true")
	}
	content = append(content, textItem(note(w, shown, structuredLeft, flagged, othersLeft, link)))
	if link.URI != "" {
		l, _ := json.Marshal(map[string]any{"type": "resource_link", "uri": link.URI, "name": "result", "title": "The whole tool result", "mimeType": "text/plain", "size": w.size()})
		content = append(content, l)
	}
	out["content"], _ = json.Marshal(content)
	cut, _ := json.Marshal(out)
	return cut
}

func textItem(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	return b
}

// note tells the model what of the result it was not given and how to
// read it.
func note(w Whole, shown int, structuredLeft, flagged bool, othersLeft int, link Link) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcptrunk: this result is %d bytes, over the %d bytes of it that may reach the context", w.size(), w.Budget)
	if len(w.Text) > 0 {
		fmt.Fprintf(&b, "; above are the first %d of its %d bytes of text", shown, len(w.Text))
	}
	b.WriteString(".")
	if structuredLeft {
		fmt.Fprintf(&b, " Its structuredContent (%d bytes) is left out: it follows the text in the whole result.", len(w.Structured))
	}
	if flagged {
		b.WriteString(" The call succeeded; it is marked as an error only because the tool's output schema describes the structuredContent left out.")
	}
	if othersLeft > 0 {
		fmt.Fprintf(&b, " %d of its content items that are not text (images, audio, resources) are left out: reading the whole result without ?page gives them.", othersLeft)
	}
	if link.URI == "" {
		fmt.Fprintf(&b, " The rest is not kept: %s.]", link.NotKept)
		return b.String()
	}
	fmt.Fprintf(&b, " The whole result is kept for you for %s: read it one page at a time (at most %d bytes each) as the resource %s?page=1 to ?page=%d", Minutes(link.For), w.Budget, link.URI, w.pages())
	if link.ReadTool != "" {
		fmt.Fprintf(&b, ", with the tool %s (argument uri)", link.ReadTool)
	} else {
		b.WriteString(", with your MCP client's resource reader (resources/read)")
	}
	b.WriteString(".]")
	return b.String()
}

// Minutes says d in minutes when it is a whole number of them.
func Minutes(d time.Duration) string {
	if d%time.Minute != 0 {
		return d.String()
	}
	if d == time.Minute {
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", d/time.Minute)
}
