package main

// MCP Apps in a real host: a page of ours (testdata/apphost) built on the
// ext-apps SDK's AppBridge, in headless Chromium, renders the example apps
// of two servers behind one `serve --http` trunk side by side, and presses
// each app's button; the same page pointed straight at each server is the
// reference the trunk must match.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/evanw/esbuild/pkg/api"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// appsShot is the screenshot of the apps behind the trunk in docs/apps-and-skills.md.
const appsShot = "apps-through-trunk.png"

// hostApp is one app the host page shows: where it connects, the tool it
// calls (whose _meta.ui.resourceUri names the app), the button it presses
// in the app, the call the app then makes by its bare name, and what it
// reads back from the app's DOM.
type hostApp struct {
	Label string   `json:"label"`
	MCP   string   `json:"mcp"`
	Tool  string   `json:"tool"`
	Click string   `json:"click"`
	Call  string   `json:"call"`
	Read  []string `json:"read"`
	// Shows maps a selector to the field of the app call's structured
	// answer it shows once the app has it.
	Shows map[string]string `json:"shows,omitempty"`
}

// hostReport is what the page records of one app (host.js).
type hostReport struct {
	Label, Step, Error      string
	ResourceURI, ContentURI string
	ToolMeta                map[string]any
	MIMEType                string
	HTMLSHA256              string
	Initialized             bool
	Result                  map[string]any
	Calls                   []struct {
		Name    string
		IsError bool
		Error   string
		Result  map[string]any
	}
	DOM map[string]string
}

func TestAppsInBrowser(t *testing.T) {
	chromium := findChromium()
	if chromium == "" {
		t.Skip("no chromium or chromium-browser on PATH: the MCP Apps browser test needs one (Debian: apt-get install chromium; .ci/run installs it)")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	page := startAppHost(t)
	node := suiteNode(t)
	direct := map[string]*testkit.NodeServer{}
	for _, pkg := range []string{basicAppPkg, monitorAppPkg} {
		s, err := testkit.StartNodeServer(node, []string{npmScript(t, pkg)}, "0", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		direct[pkg] = s
	}
	cfg := writeConfig(t, map[string]server{
		"basic":   appServer(t, basicAppPkg),
		"monitor": appServer(t, monitorAppPkg),
	}, map[string]any{"http": map[string]any{"allowedOrigins": []string{page.URL}}})
	trunk := startHTTPTrunk(t, ctx, cfg)

	apps := func(basicMCP, basicPrefix, monitorMCP, monitorPrefix string) []hostApp {
		return []hostApp{
			{Label: "basic", MCP: basicMCP, Tool: basicPrefix + "get-time", Click: "#get-time-btn", Call: "get-time", Read: []string{"#server-time"}, Shows: map[string]string{"#server-time": "time"}},
			{Label: "monitor", MCP: monitorMCP, Tool: monitorPrefix + "get-system-info", Click: "#poll-toggle-btn", Call: "poll-system-stats", Read: []string{"#info-hostname", "#info-platform", "#memory-percent"}},
		}
	}
	directURL := func(pkg string) string { return "http://127.0.0.1:" + direct[pkg].Port + "/mcp" }
	browser := newChrome(t, ctx, chromium)

	want := browser.host(t, page.URL, "directly", apps(directURL(basicAppPkg), "", directURL(monitorAppPkg), ""))
	got := browser.host(t, page.URL, "through mcptrunk", apps(trunk.url, "mcp__basic__", trunk.url, "mcp__monitor__"))

	for i, app := range got {
		ref := want[i]
		checkAppRun(t, "directly", ref)
		checkAppRun(t, "through mcptrunk", app)
		if app.HTMLSHA256 != ref.HTMLSHA256 || app.MIMEType != ref.MIMEType {
			t.Errorf("%s: the app's HTML through the trunk (sha256 %s, %s) is not the server's own (%s, %s)", app.Label, app.HTMLSHA256, app.MIMEType, ref.HTMLSHA256, ref.MIMEType)
		}
		if wantURI := "ui://" + app.Label + "/" + ref.ResourceURI[len("ui://"):]; app.ResourceURI != wantURI || app.ContentURI != wantURI {
			t.Errorf("%s: resourceUri %q, read back as %q; want %q (the tool's _meta: %v)", app.Label, app.ResourceURI, app.ContentURI, wantURI, app.ToolMeta)
		}
	}
	// What does not vary between two runs of the same server on one
	// machine shows the same both ways.
	for _, sel := range []string{"#info-hostname", "#info-platform"} {
		if got[1].DOM[sel] != want[1].DOM[sel] {
			t.Errorf("monitor: the app shows %s %q through the trunk, %q directly", sel, got[1].DOM[sel], want[1].DOM[sel])
		}
	}
	shot := browser.screenshot(t)
	saveArtifact(t, appsShot, shot)
	if os.Getenv(updateScreenshot) != "" {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", appsShot), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkAppRun checks one app's run in the page: it initialised, got its
// tool's result, made its own call by the bare name, and shows that call's
// answer.
func checkAppRun(t *testing.T, how string, r hostReport) {
	t.Helper()
	if r.Error != "" || !r.Initialized {
		t.Fatalf("%s, %s: the app did not run: %s (at: %s)", how, r.Label, r.Error, r.Step)
	}
	var answered map[string]any
	for _, c := range r.Calls {
		if c.Error != "" || c.IsError {
			t.Errorf("%s, %s: the app's call of %s failed: %s", how, r.Label, c.Name, c.Error)
		}
		if c.Result != nil {
			answered = c.Result
		}
	}
	if answered == nil {
		t.Fatalf("%s, %s: the app's own call got no structured answer: %+v", how, r.Label, r.Calls)
	}
	switch r.Label {
	case "basic":
		if r.DOM["#server-time"] != answered["time"] {
			t.Errorf("%s, basic: the app shows %q, its get-time call answered %v", how, r.DOM["#server-time"], answered["time"])
		}
	case "monitor":
		if r.DOM["#info-hostname"] != r.Result["hostname"] {
			t.Errorf("%s, monitor: the app shows host %q, the tool result says %v", how, r.DOM["#info-hostname"], r.Result["hostname"])
		}
		if r.DOM["#memory-percent"] == "" {
			t.Errorf("%s, monitor: the app shows no memory figure after polling", how)
		}
	}
}

// startAppHost serves the host page and its script, bundled with the
// ext-apps SDK and the TypeScript MCP client from testdata/npm.
func startAppHost(t *testing.T) *httptest.Server {
	t.Helper()
	dir := filepath.Join(moduleRoot, "testdata", "apphost")
	npmScript(t, basicAppPkg) // the modules are installed
	built := api.Build(api.BuildOptions{
		EntryPoints: []string{filepath.Join(dir, "host.js")},
		Bundle:      true,
		Format:      api.FormatESModule,
		Platform:    api.PlatformBrowser,
		NodePaths:   []string{npmModules},
		Write:       false,
		LogLevel:    api.LogLevelSilent,
	})
	if len(built.Errors) > 0 {
		t.Fatalf("bundling testdata/apphost/host.js: %v", built.Errors)
	}
	script := built.OutputFiles[0].Contents
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(dir, "host.html"))
	})
	mux.HandleFunc("GET /host.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(script)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// chrome is one headless Chromium the test drives over the DevTools
// protocol, with a profile of its own and nothing reaching the network.
type chrome struct{ ctx context.Context }

func newChrome(t *testing.T, ctx context.Context, path string) *chrome {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc() // waits for the browser to exit
	})
	return &chrome{ctx: bctx}
}

// host loads the page showing apps and returns what it recorded once every
// app has run or failed.
func (b *chrome) host(t *testing.T, pageURL, title string, apps []hostApp) []hostReport {
	t.Helper()
	spec, err := json.Marshal(map[string]any{"title": "MCP Apps " + title, "apps": apps})
	if err != nil {
		t.Fatal(err)
	}
	var report struct {
		Apps []hostReport
	}
	if err := chromedp.Do(b.ctx, chromedp.Navigate(pageURL+"/?spec="+url.QueryEscape(string(spec)))); err != nil {
		t.Fatalf("loading the host page %s: %v", title, err)
	}
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool]("window.report && window.report.done", chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
		t.Fatalf("the host page %s never finished: %v", title, err)
	}
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string]("JSON.stringify(window.report)"))
	if err != nil {
		t.Fatalf("reading the host page's report: %v", err)
	}
	if err := json.Unmarshal([]byte(raw), &report); err != nil {
		t.Fatal(err)
	}
	if len(report.Apps) != len(apps) {
		t.Fatalf("the host page %s recorded %d apps, want %d: %s", title, len(report.Apps), len(apps), raw)
	}
	return report.Apps
}

// screenshot is the page as it stands.
func (b *chrome) screenshot(t *testing.T) []byte {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if len(png) < 1000 || string(png[1:4]) != "PNG" {
		t.Fatalf("the screenshot is not a PNG (%d bytes)", len(png))
	}
	return png
}
