package statuspage

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"
)

var (
	//go:embed page.html
	pageText string
	//go:embed page.css
	pageStyle string
	//go:embed page.js
	pageScript string

	// page is parsed, and csp hashed, when the page is first served: a
	// trunk without a status page pays for neither at start.
	page = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(pageText)) })

	// csp lets the page run its own inline style and script, found by
	// hash, and nothing else: no other script, no frames, no requests to
	// anywhere but this origin.
	csp = sync.OnceValue(func() string {
		return "default-src 'none'; style-src " + hashSource(pageStyle) + "; script-src " + hashSource(pageScript) +
			"; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	})
)

func hashSource(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Options tune a Handler; nil means the defaults.
type Options struct {
	// Interval is how often /events sends the page's live section
	// (default one second).
	Interval time.Duration
}

// Handler serves the page at / and its live updates at /events. Mount it
// at the root of a listener (it answers 404 for every other path), behind
// the listener's own checks or Guard.
type Handler struct {
	src      Source
	interval time.Duration

	mu    sync.Mutex
	rates *rates
	// stops holds, per http.Server the handler has served on, a channel
	// closed when that server shuts down: Shutdown waits for requests to
	// end, and an event stream would otherwise never end.
	stops map[*http.Server]chan struct{}
}

// New returns the page's handler, reading the trunk from src.
func New(src Source, o *Options) *Handler {
	h := &Handler{src: src, interval: time.Second, rates: newRates(5 * time.Second), stops: map[*http.Server]chan struct{}{}}
	if o != nil && o.Interval > 0 {
		h.interval = o.Interval
	}
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the status page is read-only", http.StatusMethodNotAllowed)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", csp())
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-store")
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "":
		h.servePage(w)
	case "/events":
		h.serveEvents(w, r)
	default:
		http.NotFound(w, r)
	}
}

// view reads the trunk and formats it.
func (h *Handler) view() view {
	s := h.src()
	now := time.Now()
	h.mu.Lock()
	callRates := h.rates.observe(now, s.Servers)
	h.mu.Unlock()
	return newView(s, now, callRates)
}

func (h *Handler) servePage(w http.ResponseWriter) {
	var buf bytes.Buffer
	err := page().Execute(&buf, struct {
		View   view
		Style  template.CSS
		Script template.JS
	}{h.view(), template.CSS(pageStyle), template.JS(pageScript)})
	if err != nil {
		http.Error(w, "rendering the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

// serveEvents sends the live section, rendered as on the page, as one
// "status" event at once and then every interval, until the client goes
// away or the server shuts down.
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	stop := h.stopOf(r) // before the client can see the stream begin
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("retry: 2000\n\n")); err != nil || rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(h.interval)
	defer tick.Stop()
	var buf bytes.Buffer
	for {
		buf.Reset()
		if err := page().ExecuteTemplate(&buf, "live", h.view()); err != nil {
			return
		}
		if _, err := w.Write(event("status", buf.Bytes())); err != nil || rc.Flush() != nil {
			return
		}
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		case <-stop:
			return
		}
	}
}

// event frames data as one server-sent event: every line its own data
// field, so the client joins them back with newlines.
func event(name string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("event: " + name + "\n")
	for line := range bytes.Lines(bytes.ReplaceAll(data, []byte("\r"), nil)) {
		b.WriteString("data: ")
		b.Write(bytes.TrimSuffix(line, []byte("\n")))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// stopOf is the channel closed when the request's server shuts down,
// registered with it the first time the handler serves on it; nil (never
// closed) when the request carries no server.
func (h *Handler) stopOf(r *http.Request) <-chan struct{} {
	srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
	if !ok {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.stops[srv]
	if !ok {
		ch = make(chan struct{})
		h.stops[srv] = ch
		srv.RegisterOnShutdown(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			close(ch)
			delete(h.stops, srv)
		})
	}
	return ch
}
