package reports

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/review"
)

const testWorkload = `name: block <&> test
description: a matmul with a standalone GELU, and an unaligned product
ops:
  - {name: up, op: matmul m=4096 n=4096 k=4096}
  - {name: act, op: gelu n=16777216}
  - {name: odd, op: matmul m=4095 n=4095 k=4095}
`

func testReview(t *testing.T, names ...string) Review {
	t.Helper()
	w, err := ops.ParseWorkload("w.yaml", []byte(testWorkload))
	if err != nil {
		t.Fatal(err)
	}
	c, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var rv Review
	for _, n := range names {
		d, err := c.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		r, err := review.Check(w, d, c.Devices())
		if err != nil {
			t.Fatal(err)
		}
		rv.Reports = append(rv.Reports, r)
	}
	return rv
}

// TestReviewHTMLSelfContained checks that the page needs nothing from the
// network (no scripts, no external references), escapes the workload's
// text, and holds one SVG chart per chart per device.
func TestReviewHTMLSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := ReviewHTML(&buf, testReview(t, "h100", "a100")); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{"<script", "src=", "@import", "url(", `href="http`, "<link", "<?xml"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if !strings.Contains(page, "block &lt;&amp;&gt; test") {
		t.Error("workload name not escaped")
	}
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d SVG charts, want 2 per device", n)
	}
	for _, want := range []string{`id="h100-sxm"`, `href="#h100-sxm"`, "gemm_alignment", "fusion"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The roofline places ops at their expected throughput; its legend says so.
	if !strings.Contains(page, ">expected<") || !strings.Contains(page, "roof at its intensity") {
		t.Error("roofline legend does not name the expected throughput it plots")
	}
}

// TestReviewHTMLInBrowser renders the page in headless Chromium and checks
// that the screenshot is not blank: a good share of it is not background,
// in many colours (text, the severity colours, the charts). An empty page
// must fail the same test.
func TestReviewHTMLInBrowser(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium on PATH: the browser rendering test is skipped (.ci/run installs Debian's chromium package)")
	}
	var buf bytes.Buffer
	if err := ReviewHTML(&buf, testReview(t, "h100")); err != nil {
		t.Fatal(err)
	}
	if share, colours := ink(t, browser, buf.Bytes()); share < 0.2 || colours < 20 {
		t.Errorf("screenshot looks blank: %.1f%% of pixels differ from the background, %d colours", 100*share, colours)
	}
	if share, colours := ink(t, browser, []byte("<!DOCTYPE html><html><body></body></html>")); share >= 0.2 && colours >= 20 {
		t.Errorf("an empty page passes: %.1f%% of pixels differ from the background, %d colours", 100*share, colours)
	}
}

// ink screenshots page in the browser and returns the share of pixels that
// differ from the background (the bottom-left pixel) and the number of
// distinct colours (4 bits per channel), sampling every other pixel.
func ink(t *testing.T, browser string, page []byte) (float64, int) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "page.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, "--window-size=1200,2000", "file://"+file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	br, bg, bb, _ := img.At(b.Min.X+2, b.Max.Y-2).RGBA()
	colours := map[[3]uint32]bool{}
	n, differ := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 12, g >> 12, bl >> 12}] = true
			if r != br || g != bg || bl != bb {
				differ++
			}
			n++
		}
	}
	return float64(differ) / float64(n), len(colours)
}
