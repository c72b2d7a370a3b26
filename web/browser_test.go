package web

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/gpucalc/gpucalc/internal/testfile"
)

var screenshots = flag.String("screenshots", "", "write a screenshot of each page to `DIR`/serve-*.png (docs/ in the repository: go test ./web -run Browser -screenshots ../docs)")

// newBrowser starts headless Chromium with a fresh profile, with nothing
// of its own on the network; it ends with the test, and its profile is
// removed (Chromium's helper processes may write to it for a moment after
// the browser exits, so the removal is retried).
func newBrowser(t *testing.T, exe string, timeout time.Duration) context.Context {
	t.Helper()
	profile, err := os.MkdirTemp("", "gpucalc-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(profile), chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancel()
		cancelTab()
		cancelAlloc()
		// The killed browser leaves its singleton socket in a directory
		// of its own, which the profile links to.
		if sock, err := os.Readlink(filepath.Join(profile, "SingletonSocket")); err == nil && strings.Contains(filepath.Base(filepath.Dir(sock)), "Chromium") {
			os.RemoveAll(filepath.Dir(sock))
		}
		for range 50 {
			if err = os.RemoveAll(profile); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("the browser's profile %s is left: %v", profile, err)
	})
	return ctx
}

// cspBlocked lists what the page's policy blocked, in the page and in the
// report's frame.
const cspBlocked = `[...(window.cspBlocked || []), ...((document.getElementById("report") || {}).contentWindow || {}).cspBlocked || []]`

// browser finds Chromium, or skips the test.
func browser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: the browser test is skipped (.ci/run installs Debian's chromium package)")
	return ""
}

// TestBrowser drives the app in headless Chromium: it types into the
// occupancy form and checks the A100 example (64 registers, 48K of shared
// memory, 256 threads: 3 blocks, limited by shared memory), that a graph
// repainted, that a field error shows beside its field, that the shared URL
// gives the same view, that every control is reachable by Tab, and that the
// roofline, model and reports pages answer. It logs the time from input to the
// frame that paints the answer (the target is 50 ms; not asserted, since a
// loaded CI machine would make that flaky).
func TestBrowser(t *testing.T) {
	exe := browser(t)
	srv := httptest.NewServer(newTestServer(t, true))
	defer srv.Close()

	ctx := newBrowser(t, exe, 3*time.Minute)
	// Record what the Content-Security-Policy blocks, in every frame.
	run0 := func(a chromedp.Action) {
		if err := chromedp.Run(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	run0(chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := cdppage.AddScriptToEvaluateOnNewDocument(`window.cspBlocked = []; document.addEventListener("securitypolicyviolation", e => window.cspBlocked.push(e.violatedDirective + " " + e.blockedURI));`).Do(ctx)
		return err
	}))

	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	answers := func() int {
		var s string
		run("read the answer count", chromedp.Evaluate(`document.body.dataset.answers || "0"`, &s))
		n, _ := strconv.Atoi(s)
		return n
	}
	// waitAnswer waits for an answer after the n-th.
	waitAnswer := func(n int) {
		t.Helper()
		run("wait for an answer", chromedp.Poll(fmt.Sprintf(`Number(document.body.dataset.answers || 0) > %d`, n), nil, chromedp.WithPollingTimeout(60*time.Second)))
	}
	cell := func(key string) string {
		var s string
		run("read "+key, chromedp.Evaluate(fmt.Sprintf(`(document.querySelector('main tr[data-key=%q] td:nth-child(2)') || {}).textContent || ""`, key), &s))
		return s
	}
	// typeInto replaces a field's text by typing, one key at a time, and
	// returns the input-to-repaint time of each key that got its answer.
	var fetches []float64
	typeInto := func(id, text string) []float64 {
		t.Helper()
		run("focus "+id, chromedp.Focus("#"+id, chromedp.ByQuery), chromedp.Evaluate(`document.getElementById(`+strconv.Quote(id)+`).select()`, nil))
		var times []float64
		for _, k := range text {
			n := answers()
			run("type into "+id, chromedp.KeyEvent(string(k)))
			waitAnswer(n)
			var ms string
			var fetch float64
			run("read the repaint time", chromedp.Evaluate(`document.body.dataset.repaintMs`, &ms),
				chromedp.Evaluate(`performance.getEntriesByType("resource").filter(e => e.name.includes("/api/")).pop().duration`, &fetch))
			if v, err := strconv.ParseFloat(ms, 64); err == nil {
				times, fetches = append(times, v), append(fetches, fetch)
			}
		}
		return times
	}

	// Occupancy: the A100 example, typed.
	run("load the occupancy page", chromedp.Navigate(srv.URL+"/"))
	waitAnswer(0)
	n := answers()
	run("pick the A100", chromedp.SetValue("#device", "a100-sxm4-80gb", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("device").dispatchEvent(new Event("input", {bubbles: true}))`, nil))
	waitAnswer(n)
	var figure string
	run("read the graphs", chromedp.OuterHTML("#chart-occupancy", &figure, chromedp.ByQuery))
	times := typeInto("regs", "64")
	times = append(times, typeInto("smem", "48K")...)
	if got := cell("blocks per SM"); got != "3" {
		t.Errorf("A100, 64 registers, 48K: blocks per SM %q, want 3", got)
	}
	if got := cell("limited by"); got != "shared memory" {
		t.Errorf("A100, 64 registers, 48K: limited by %q, want shared memory", got)
	}
	var figure2, cli string
	run("read the graphs again", chromedp.OuterHTML("#chart-occupancy", &figure2, chromedp.ByQuery), chromedp.Text("#cli", &cli, chromedp.ByQuery))
	if figure2 == figure || !strings.Contains(figure2, "<svg") || !strings.Contains(figure2, "64 registers") {
		t.Errorf("the graphs did not repaint for 64 registers after the input changed: %.200s", figure2)
	}
	if want := "gpucalc occupancy --device a100-sxm4-80gb --regs 64 --smem 48K"; cli != want {
		t.Errorf("Copy as CLI shows %q, want %q", cli, want)
	}
	slices.Sort(times)
	if len(times) == 0 {
		t.Fatal("no input-to-repaint time was recorded")
	}
	slices.Sort(fetches)
	t.Logf("input to repaint over %d keystrokes: median %.1f ms, max %.1f ms (target 50 ms); of which the API request: median %.1f ms",
		len(times), times[len(times)/2], times[len(times)-1], fetches[len(fetches)/2])

	// The URL holds the inputs: a second tab shows the same view.
	var url, view string
	run("read the URL and the view", chromedp.Location(&url), chromedp.Evaluate(viewText, &view))
	if !strings.Contains(url, "regs=64") || !strings.Contains(url, "smem=48K") {
		t.Errorf("the URL does not hold the inputs: %s", url)
	}
	tab, cancelTab := chromedp.NewContext(ctx)
	var view2 string
	if err := chromedp.Run(tab, chromedp.Navigate(url),
		chromedp.Poll(`Number(document.body.dataset.answers || 0) > 0`, nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Evaluate(viewText, &view2)); err != nil {
		t.Fatalf("following the shared URL: %v", err)
	}
	cancelTab()
	if view2 != view || !strings.Contains(view2, "A100") {
		t.Errorf("the shared URL gives another view:\n%.300s\nwant\n%.300s", view2, view)
	}

	// A bad value: an inline error beside the field, the last answer kept.
	typeInto("regs", "300")
	var msg string
	var invalid bool
	run("read the field error", chromedp.Text("#err-regs", &msg, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("regs").hasAttribute("aria-invalid")`, &invalid))
	if !strings.Contains(msg, "255") || !invalid || cell("blocks per SM") != "3" {
		t.Errorf("regs 300: error %q (aria-invalid %v), blocks %q; want the 255 limit beside the field and the last answer kept", msg, invalid, cell("blocks per SM"))
	}
	typeInto("regs", "64")
	var blocked []string
	run("read what the policy blocked", chromedp.Evaluate(cspBlocked, &blocked))
	if len(blocked) > 0 {
		t.Errorf("occupancy: the Content-Security-Policy blocked %q", blocked)
	}
	shot(t, ctx, "occupancy")
	keyboard(t, ctx, srv.URL+"/")

	// Roofline: an example on two devices.
	run("load the roofline page", chromedp.Navigate(srv.URL+"/roofline?source=example&example=llama3-8b-prefill.yaml&devices=h100,a100"))
	waitAnswer(0)
	var rows int
	var svg string
	run("read the roofline", chromedp.Evaluate(`document.querySelectorAll("#tables tr").length`, &rows), chromedp.OuterHTML("#chart-roofline", &svg, chromedp.ByQuery))
	if rows < 10 || !strings.Contains(svg, "<svg") {
		t.Errorf("roofline: %d table rows and chart %.60q", rows, svg)
	}
	shot(t, ctx, "roofline")
	keyboard(t, ctx, srv.URL+"/roofline")

	// Model: Llama-3.1-70B on four H100s.
	run("load the model page", chromedp.Navigate(srv.URL+"/model?model=llama-3.1-70b&devices=h100&tp=4&batch=16&ctx=8192"))
	waitAnswer(0)
	var fits string
	run("read the model", chromedp.Evaluate(`document.getElementById("tables").innerText`, &fits), chromedp.OuterHTML("#chart-model", &svg, chromedp.ByQuery),
		chromedp.Evaluate(cspBlocked, &blocked))
	if len(blocked) > 0 {
		t.Errorf("model: the Content-Security-Policy blocked %q", blocked)
	}
	if !strings.Contains(fits, "llama-3.1-70b on H100 SXM") || !strings.Contains(svg, "<svg") {
		t.Errorf("model: tables %.200q, chart %.60q", fits, svg)
	}
	shot(t, ctx, "model")
	keyboard(t, ctx, srv.URL+"/model")

	// Reports: an example workload gives the check page.
	run("load the reports page", chromedp.Navigate(srv.URL+"/reports?example=llama3-8b-decode.yaml&device=h100"))
	waitAnswer(0)
	var srcdoc string
	run("read the report", chromedp.Evaluate(`document.getElementById("report").srcdoc`, &srcdoc))
	if !strings.Contains(srcdoc, "Llama-3-8B") || !strings.Contains(srcdoc, "<svg") {
		t.Errorf("reports: the check page is missing: %.100q", srcdoc)
	}
	run("let the report draw", chromedp.Sleep(500*time.Millisecond))
	var shown string
	run("read the report's frame", chromedp.Evaluate(`document.getElementById("report").contentDocument.body.innerText`, &shown))
	if !strings.Contains(shown, "Llama-3-8B") {
		t.Errorf("reports: the check page does not show in its frame under the page's policy: %.100q", shown)
	}
	run("read what the policy blocked", chromedp.Evaluate(cspBlocked, &blocked))
	if len(blocked) > 0 {
		t.Errorf("reports: the Content-Security-Policy blocked %q", blocked)
	}
	shot(t, ctx, "reports")

	// Reports: an uploaded Nsight Compute export gives gpucalc ncu's tables
	// and chart.
	export := filepath.Join(t.TempDir(), "profile.csv")
	if err := os.WriteFile(export, testfile.Gunzip(t, "testdata/ncu_raw.csv.gz"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("upload the export", chromedp.SetValue("#device", "", chromedp.ByQuery), chromedp.SetValue("#example", "", chromedp.ByQuery),
		chromedp.SetUploadFiles("#file", []string{export}, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("chart-ncu") !== null`, nil, chromedp.WithPollingTimeout(60*time.Second)))
	var kernels int
	var errText string
	run("read the ncu report", chromedp.Evaluate(`document.querySelectorAll("#tables tbody tr").length`, &kernels),
		chromedp.Evaluate(`(document.getElementById("chart-ncu") || {}).innerHTML || ""`, &svg), chromedp.Text("#cli", &cli, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll("[data-error-for]")].map(e => e.textContent).join(" ")`, &errText))
	if kernels == 0 || !strings.Contains(svg, "<svg") || cli != "gpucalc ncu profile.csv" {
		t.Errorf("ncu upload: %d table rows, chart %.60q, command line %q, errors %q", kernels, svg, cli, errText)
	}
	keyboard(t, ctx, srv.URL+"/reports")
}

// viewText is the text of the answer on a page.
const viewText = `["summary", "tables", "cli"].map(id => (document.getElementById(id) || {}).innerText || "").join("\n")`

// keyboard presses Tab through the page and checks that every control
// (but the unchecked buttons of a radio group, reached by arrow keys) gets
// the focus.
func keyboard(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	var want []string
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.Evaluate(`(() => {
		const out = [];
		document.querySelectorAll("input, select, textarea, button, a[href]").forEach((el, i) => {
			if (el.type === "radio" && !el.checked) return;
			el.dataset.k = String(i);
			out.push(String(i));
		});
		return out;
	})()`, &want)); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range len(want) + 5 {
		var k string
		if err := chromedp.Run(ctx, chromedp.KeyEvent(kb.Tab), chromedp.Evaluate(`document.activeElement.dataset.k || ""`, &k)); err != nil {
			t.Fatal(err)
		}
		seen[k] = true
	}
	var missed []string
	for _, k := range want {
		if !seen[k] {
			var html string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('[data-k="`+k+`"]').outerHTML`, &html))
			missed = append(missed, html)
		}
	}
	if len(missed) > 0 {
		t.Errorf("%s: Tab does not reach %d of %d controls: %s", url, len(missed), len(want), strings.Join(missed, " "))
	}
}

// shot writes a screenshot of the page's first 1400×1200 pixels to
// -screenshots DIR.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *screenshots == "" {
		return
	}
	var png []byte
	if err := chromedp.Run(ctx, emulation.SetDeviceMetricsOverride(1400, 1200, 1, false), chromedp.CaptureScreenshot(&png)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*screenshots, "serve-"+name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserCrossSite: a page on a second local origin (another port of
// 127.0.0.1, same-site to the browser; and localhost, cross-site) tries what
// a malicious page can against gpucalc serve in the user's browser: simple
// GETs and POSTs by fetch, an image tag, a form posted with a file, and
// fetches with the app's header (which need a preflight). Every request
// that reaches the server is refused with 403 and no calculation starts.
func TestBrowserCrossSite(t *testing.T) {
	exe := browser(t)
	s, h := newLimitedServer(t, defaultLimits)
	var mu sync.Mutex
	var arrived []string
	gpucalc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if strings.HasPrefix(r.URL.Path, "/api/") {
			mu.Lock()
			arrived = append(arrived, fmt.Sprintf("%s %s (Sec-Fetch-Site %q, Origin %q): %d", r.Method, r.URL.Path, r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Origin"), rec.Code))
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer gpucalc.Close()
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, strings.ReplaceAll(attackPage, "GPUCALC", gpucalc.URL))
	}))
	defer attacker.Close()
	_, port, _ := strings.Cut(strings.TrimPrefix(attacker.URL, "http://"), ":")

	ctx := newBrowser(t, exe, 2*time.Minute)
	for _, origin := range []string{attacker.URL, "http://localhost:" + port} {
		mu.Lock()
		arrived = nil
		mu.Unlock()
		var outcome string
		if err := chromedp.Run(ctx, chromedp.Navigate(origin+"/"),
			chromedp.Poll(`document.body.dataset.done`, nil, chromedp.WithPollingTimeout(60*time.Second)),
			chromedp.Evaluate(`document.body.dataset.done`, &outcome)); err != nil {
			t.Fatalf("%s: the attacking page did not run: %v", origin, err)
		}
		// The image, the form and the preflights arrive on their own time.
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			n := len(arrived)
			mu.Unlock()
			if n >= 8 || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		mu.Lock()
		got := slices.Clone(arrived)
		mu.Unlock()
		t.Logf("from %s: %s; at the server: %q", origin, outcome, got)
		if len(got) < 8 {
			t.Errorf("from %s: %d requests reached the server, want at least 8 (4 simple requests, the image, the form, 2 preflights): %q", origin, len(got), got)
		}
		for _, a := range got {
			if !strings.HasSuffix(a, ": 403") {
				t.Errorf("from %s: not refused: %s", origin, a)
			}
		}
		if strings.Contains(outcome, ": read ") {
			t.Errorf("from %s: the page read an answer: %s", origin, outcome)
		}
	}
	if n := s.started.Load(); n != 0 {
		t.Errorf("%d calculations started for pages of other origins, want 0", n)
	}
}

// attackPage is a page of another origin that tries to make gpucalc serve
// (at GPUCALC) work. It records in body[data-done] what each attempt got.
const attackPage = `<!DOCTYPE html>
<html><body>
<img src="GPUCALC/api/model?devices=h100,h200,a100&source=builtin&model=llama-3.1-70b">
<form id="form" method="POST" action="GPUCALC/api/report" enctype="multipart/form-data" target="sink">
<input type="file" name="file" id="file"><input type="hidden" name="device" value="h100">
</form>
<iframe name="sink"></iframe>
<script>
const api = "GPUCALC";
const workload = "name: x\nops:\n  - {name: a, op: matmul m=4096 n=4096 k=4096}\n";
function formData() {
  const fd = new FormData();
  fd.append("file", new Blob([workload]), "w.yaml");
  fd.append("device", "h100");
  return fd;
}
async function attempt(name, p) {
  try {
    const res = await p;
    if (res.type === "opaque") return name + ": sent, answer unreadable";
    const body = await res.text();
    return name + ": read " + res.status + " " + body.slice(0, 80);
  } catch (e) {
    return name + ": " + e.name;
  }
}
(async () => {
  const out = await Promise.all([
    attempt("GET no-cors", fetch(api + "/api/roofline?source=ops&ops=matmul+m%3D8192+n%3D8192+k%3D8192&devices=h100", {mode: "no-cors"})),
    attempt("GET cors", fetch(api + "/api/occupancy?device=h100")),
    attempt("POST no-cors", fetch(api + "/api/report", {method: "POST", body: formData(), mode: "no-cors"})),
    attempt("POST text/plain", fetch(api + "/api/report", {method: "POST", body: workload, mode: "no-cors", headers: {"Content-Type": "text/plain"}})),
    attempt("POST with the header", fetch(api + "/api/report", {method: "POST", body: formData(), headers: {"X-Gpucalc-Request": "1"}})),
    attempt("GET with the header", fetch(api + "/api/occupancy?device=h100", {headers: {"X-Gpucalc-Request": "1"}})),
  ]);
  const dt = new DataTransfer();
  dt.items.add(new File([workload], "w.yaml"));
  document.getElementById("file").files = dt.files;
  document.getElementById("form").submit();
  document.body.dataset.done = out.join("; ");
})();
</script>
</body></html>`
