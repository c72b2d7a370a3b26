package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/web"
)

// shellSplit splits a command line the way a POSIX shell splits the lines
// the web app writes: words separated by spaces, single quotes, '\” for a
// quote.
func shellSplit(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, word := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, word = !quoted, true
		case r == ' ' && !quoted:
			if word {
				out = append(out, cur.String())
				cur.Reset()
			}
			word = false
		default:
			cur.WriteRune(r)
			word = true
		}
	}
	if word {
		out = append(out, cur.String())
	}
	return out
}

// TestServeMatchesCLI: for each set of inputs, the web app's answer equals
// what its "Copy as CLI" command line prints with --format json, so the page
// and the CLI give the same numbers.
func TestServeMatchesCLI(t *testing.T) {
	t.Chdir("../..") // the command lines name examples/ from the repository root
	c, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Options{Catalog: c, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, cli string }{
		{"/api/occupancy?device=a100&regs=64&smem=48K", "gpucalc occupancy --device a100 --regs 64 --smem 48K"},
		{"/api/occupancy?device=h100&threads=128&regs=40&static-smem=4K&smem=104K&carveout=50%25&cluster=4&barriers=2", ""},
		{"/api/occupancy?device=sm_86&threads=96&regs=255&max-threads=64", ""},
		{"/api/occupancy?device=b200&threads=1024&regs=32&carveout=100K", ""},
		{"/api/roofline?source=ops&ops=matmul+m%3D4096+n%3D4096+k%3D4096+dtype%3Dbf16%0Asoftmax+rows%3D4096+cols%3D32768&devices=h100", ""},
		{"/api/roofline?source=example&example=llama3-8b-prefill.yaml&devices=h100,a100,h200", ""},
		{"/api/report?example=resnet50-bottleneck.yaml&device=l40s", ""},
		{"/api/model?devices=h100&batch=8&ctx=4096&ops=1", "gpucalc model llama-3.1-8b --device h100 --batch 8 --ctx 4096 --ops"},
		{"/api/model?model=llama-3.1-70b&devices=h100,h200&tp=4&weights=fp8&kv=fp8&gen=128&full-cache=1", ""},
	} {
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		compareWithCLI(t, h, r, tc.cli, nil)
	}

	// An uploaded Nsight Compute export against 'gpucalc ncu FILE', a trace
	// against 'gpucalc trace FILE'.
	zr, err := os.Open("web/testdata/ncu_raw.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	gz, err := gzip.NewReader(zr)
	if err != nil {
		t.Fatal(err)
	}
	export, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "profile.csv")
	if err := os.WriteFile(file, export, 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := os.ReadFile("trace/testdata/trace_resnet50_train.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, device string
		data               []byte
	}{
		{"profile.csv", file, "", export},
		{"profile.csv", file, "h200", export},
		{"trace_resnet50_train.json.gz", "trace/testdata/trace_resnet50_train.json.gz", "", tr},
		{"trace_resnet50_train.json.gz", "trace/testdata/trace_resnet50_train.json.gz", "a100", tr},
	} {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("file", tc.name)
		fw.Write(tc.data)
		mw.WriteField("device", tc.device)
		mw.Close()
		r := httptest.NewRequest(http.MethodPost, "/api/report", &body)
		r.Header.Set("Content-Type", mw.FormDataContentType())
		compareWithCLI(t, h, r, "", map[string]string{tc.name: tc.file})
	}
}

// compareWithCLI answers the request and runs the answer's command line
// (with the files renamed as in files) through the CLI with --format json:
// the page's view must equal the CLI's JSON.
func compareWithCLI(t *testing.T, h http.Handler, r *http.Request, wantCLI string, files map[string]string) {
	t.Helper()
	path := r.URL.String()
	r.Host = "localhost:8080"
	r.Header.Set("X-Gpucalc-Request", "1")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var a struct {
		View   json.RawMessage   `json:"view"`
		CLI    string            `json:"cli"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || w.Code != 200 {
		t.Fatalf("%s: status %d, %v: %s", path, w.Code, err, w.Body)
	}
	if wantCLI != "" && a.CLI != wantCLI {
		t.Errorf("%s: command line %q, want %q", path, a.CLI, wantCLI)
	}
	args := shellSplit(a.CLI)
	if len(args) < 2 || args[0] != "gpucalc" {
		t.Fatalf("%s: not a gpucalc command line: %q", path, a.CLI)
	}
	args = append(args[1:], "--format", "json")
	for i, arg := range args {
		if f, ok := files[arg]; ok {
			args[i] = f
		}
	}
	for i, arg := range args {
		if arg == "html" && args[i-1] == "--format" {
			args = append(args[:i-1], args[i+1:]...) // check's page is checked as JSON
			break
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(args, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" }); code != 0 {
		t.Fatalf("gpucalc %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	var page, cli any
	if err := json.Unmarshal(a.View, &page); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(stdout.Bytes(), &cli); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(page, cli) {
		t.Errorf("%s: the page's answer differs from gpucalc %s:\npage: %.400s\ncli:  %.400s", path, strings.Join(args, " "), a.View, stdout.String())
	}
}

// TestServeListens starts the server as the command does, reads the address
// it announces, gets the occupancy page, and stops it. On an address other
// than loopback it must say that the Host check is off.
func TestServeListens(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		warns bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		pr, pw := io.Pipe()
		f := &factory{In: strings.NewReader(""), Out: io.Discard, ErrOut: pw, Getenv: func(string) string { return "" }}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- serveRun(&serveOptions{f: f, ctx: ctx, addr: tc.addr}); pw.Close() }()
		sc := bufio.NewScanner(pr)
		var lines []string
		url := ""
		for url == "" && sc.Scan() {
			lines = append(lines, sc.Text())
			if _, rest, ok := strings.Cut(sc.Text(), "gpucalc serve: http://"); ok {
				url = "http://" + strings.Fields(rest)[0]
			}
		}
		go io.Copy(io.Discard, pr)
		if url == "" {
			t.Fatalf("--addr %s: no URL announced: %q", tc.addr, lines)
		}
		warned := strings.Contains(strings.Join(lines, "\n"), "Host check is off")
		if warned != tc.warns {
			t.Errorf("--addr %s: warned %v, want %v: %q", tc.addr, warned, tc.warns, lines)
		}
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "Occupancy") {
			t.Errorf("--addr %s: GET %s: %d %.100s", tc.addr, url, resp.StatusCode, body)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("--addr %s: %v", tc.addr, err)
		}
	}
}

// TestServeAddr: a malformed --addr is a usage error, an address that
// cannot be listened on a failure, each one line naming the flag.
func TestServeAddr(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		addr string
		code int
		want string
	}{
		{"nonsense", exitUsage, "expected HOST:PORT"},
		{"127.0.0.1:99999", exitUsage, "0 to 65535"},
		{"127.0.0.1:http", exitUsage, "0 to 65535"},
		{busy.Addr().String(), exitFailure, "cannot listen"},
	} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"serve", "--addr", tc.addr}, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" })
		if code != tc.code || !strings.Contains(stderr.String(), "--addr") || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("--addr %s: exit %d, %q; want exit %d and one line with %q", tc.addr, code, stderr.String(), tc.code, tc.want)
		}
	}
}

// TestServeRefusesAsCLI: every input the CLI refuses as a usage error, the
// web refuses with the same words, under the form's field, because both map
// their inputs onto the same query type (occupancy.Query, roofline.Query,
// model.Query) and neither validates on its own.
func TestServeRefusesAsCLI(t *testing.T) {
	c, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Options{Catalog: c, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cli   []string
		path  string // the web's request, the same input in the form's fields
		field string // the form's field the refusal is under
	}{
		// The occupancy page.
		{[]string{"occupancy", "--regs", "256"}, "/api/occupancy?regs=256", "regs"},
		{[]string{"occupancy", "--threads", "1025"}, "/api/occupancy?threads=1025", "threads"},
		{[]string{"occupancy", "--threads", "-1"}, "/api/occupancy?threads=-1", "threads"},
		{[]string{"occupancy", "--barriers", "17"}, "/api/occupancy?barriers=17", "barriers"},
		{[]string{"occupancy", "--max-threads", "-2"}, "/api/occupancy?max-threads=-2", "max-threads"},
		{[]string{"occupancy", "--smem", "228K"}, "/api/occupancy?smem=228K", "smem"},
		{[]string{"occupancy", "--smem", "48Q"}, "/api/occupancy?smem=48Q", "smem"},
		{[]string{"occupancy", "--smem", "4K", "--static-smem", "8K"}, "/api/occupancy?smem=4K&static-smem=8K", "static-smem"},
		{[]string{"occupancy", "--smem", "64K", "--static-smem", "64K"}, "/api/occupancy?smem=64K&static-smem=64K", "static-smem"},
		{[]string{"occupancy", "--carveout", "50"}, "/api/occupancy?carveout=50", "carveout"},
		{[]string{"occupancy", "--carveout", "300K"}, "/api/occupancy?carveout=300K", "carveout"},
		{[]string{"occupancy", "--device", "h900"}, "/api/occupancy?device=h900", "device"},
		{[]string{"occupancy", "--device", "mi300x"}, "/api/occupancy?device=mi300x", "device"},
		{[]string{"occupancy", "--arch", "sm_99"}, "/api/occupancy?arch=sm_99", "device"},
		{[]string{"occupancy", "--arch", "sm_80", "--cluster", "2"}, "/api/occupancy?arch=sm_80&cluster=2", "cluster"},
		{[]string{"occupancy", "--device", "a100", "--cluster", "2"}, "/api/occupancy?device=a100&cluster=2", "cluster"},
		{[]string{"occupancy", "--cluster", "17"}, "/api/occupancy?cluster=17", "cluster"},
		// The roofline page.
		{[]string{"roofline", "--op", "matmul m=4"}, "/api/roofline?source=ops&ops=matmul+m%3D4", "ops"},
		{[]string{"roofline", "--op", "conv9d n=1"}, "/api/roofline?source=ops&ops=conv9d+n%3D1", "ops"},
		{[]string{"roofline", "--op", "copy n=1", "--devices", "h100,h100"}, "/api/roofline?source=ops&ops=copy+n%3D1&devices=h100,h100", "devices"},
		{[]string{"roofline", "--op", "copy n=1", "--devices", "h100,"}, "/api/roofline?source=ops&ops=copy+n%3D1&devices=h100,", "devices"},
		{[]string{"roofline", "--op", "copy n=1", "--device", "h900"}, "/api/roofline?source=ops&ops=copy+n%3D1&devices=h900", "devices"},
		{[]string{"roofline", "--op", "copy n=1", "--devices", "h100,h900"}, "/api/roofline?source=ops&ops=copy+n%3D1&devices=h100,h900", "devices"},
		// The model page.
		{[]string{"model", "llama-3.1-8b", "--devices", "h100,h100"}, "/api/model?devices=h100,h100", "devices"},
		{[]string{"model", "llama-3.1-8b", "--devices", "h100,"}, "/api/model?devices=h100,", "devices"},
		{[]string{"model", "llama-3.1-8b", "--device", "h900"}, "/api/model?devices=h900", "devices"},
		{[]string{"model", "gpt-9"}, "/api/model?model=gpt-9", "model"},
		{[]string{"model", "llama-3.1-8b", "--tp", "0"}, "/api/model?tp=0", "tp"},
		{[]string{"model", "llama-3.1-8b", "--batch", "0"}, "/api/model?batch=0", "batch"},
		{[]string{"model", "llama-3.1-8b", "--prompt", "0"}, "/api/model?prompt=0", "prompt"},
		{[]string{"model", "llama-3.1-8b", "--ctx", "-1"}, "/api/model?ctx=-1", "ctx"},
		{[]string{"model", "llama-3.1-8b", "--gen", "-1"}, "/api/model?gen=-1", "gen"},
		{[]string{"model", "llama-3.1-8b", "--dtype", "fp7"}, "/api/model?dtype=fp7", "dtype"},
		{[]string{"model", "llama-3.1-8b", "--weights", "int3"}, "/api/model?weights=int3", "weights"},
		{[]string{"model", "llama-3.1-8b", "--kv", "int3"}, "/api/model?kv=int3", "kv"},
		{[]string{"model", "llama-3.1-8b", "--prompt", "4096", "--ctx", "100"}, "/api/model?prompt=4096&ctx=100", "model"},
		{[]string{"model", "llama-3.1-8b", "--tp", "3"}, "/api/model?tp=3", "model"},
	} {
		t.Run(strings.Join(tc.cli, " "), func(t *testing.T) {
			code, _, stderr := runCLI(tc.cli...)
			if code != exitUsage {
				t.Fatalf("the CLI exits %d, want %d (a refusal): %s", code, exitUsage, stderr)
			}
			want := strings.TrimPrefix(strings.TrimSuffix(stderr, "\n"), "gpucalc: ")
			if i := strings.LastIndex(want, " (see 'gpucalc "); i >= 0 && strings.HasSuffix(want, " --help')") {
				want = want[:i]
			}
			r := httptest.NewRequest(http.MethodGet, tc.path, nil)
			r.Host = "localhost:8080"
			r.Header.Set("X-Gpucalc-Request", "1")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			var a struct {
				Errors map[string]string `json:"errors"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || w.Code != http.StatusUnprocessableEntity {
				t.Fatalf("%s: status %d (%v), want 422: %s", tc.path, w.Code, err, w.Body)
			}
			if got := a.Errors[tc.field]; got != want {
				t.Errorf("%s: the web refuses with\n  %q under %q (all: %q)\nthe CLI with\n  %q", tc.path, got, tc.field, a.Errors, want)
			}
		})
	}
}
