package web

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

var screenshots = flag.String("screenshots", "", "write a screenshot of each page to `DIR`/serve-*.png (docs/ in the repository: go test ./web -run Browser -screenshots ../docs)")

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

	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1400, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

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
	times = append(times, typeInto("dynamic_smem", "48K")...)
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
	if !strings.Contains(url, "regs=64") || !strings.Contains(url, "dynamic_smem=48K") {
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
	run("read the model", chromedp.Evaluate(`document.getElementById("tables").innerText`, &fits), chromedp.OuterHTML("#chart-model", &svg, chromedp.ByQuery))
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
	shot(t, ctx, "reports")

	// Reports: an uploaded Nsight Compute export gives gpucalc ncu's tables
	// and chart.
	export := filepath.Join(t.TempDir(), "profile.csv")
	if err := os.WriteFile(export, gunzip(t, "testdata/ncu_raw.csv.gz"), 0o644); err != nil {
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
