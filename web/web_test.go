package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
)

func newTestServer(t testing.TB, loopbackOnly bool) http.Handler {
	t.Helper()
	c, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Catalog: c, LoopbackOnly: loopbackOnly})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// get answers a request to the handler with the given Host header.
func get(h http.Handler, host, target string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Host = host
	r.Header.Set(markerHeader, "1")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func decode(t *testing.T, w *httptest.ResponseRecorder) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("%v: %s", err, w.Body.String())
	}
	return a
}

// refuses checks that a GET of path is refused (422) with want in the
// error under field, the form's field the CLI's flag is named as.
func refuses(t *testing.T, h http.Handler, path, field, want string) {
	t.Helper()
	w := get(h, "localhost", path)
	if a := decode(t, w); w.Code != http.StatusUnprocessableEntity || !strings.Contains(a.Errors[field], want) {
		t.Errorf("%.60s: status %d, errors %.300q; want 422 and %q in field %s", path, w.Code, a.Errors, want, field)
	}
}

// TestHostCheck: in the default (loopback) mode a page on another site that
// points its own name at 127.0.0.1 (DNS rebinding) is refused.
func TestHostCheck(t *testing.T) {
	strict := newTestServer(t, true)
	open := newTestServer(t, false)
	for _, tc := range []struct {
		host         string
		strict, open int
	}{
		{"127.0.0.1:8080", 200, 200},
		{"localhost:8080", 200, 200},
		{"LOCALHOST", 200, 200},
		{"[::1]:8080", 200, 200},
		{"127.0.0.2:8080", 200, 200},
		{"attacker.example:8080", 421, 200},
		{"localhost.attacker.example", 421, 200},
		{"127.0.0.1.nip.io:8080", 421, 200},
		{"192.168.1.10:8080", 421, 200},
		{"", 421, 200},
	} {
		for _, path := range []string{"/", "/api/occupancy?device=a100"} {
			if got := get(strict, tc.host, path).Code; got != tc.strict {
				t.Errorf("loopback mode, Host %q, %s: status %d, want %d", tc.host, path, got, tc.strict)
			}
			if got := get(open, tc.host, path).Code; got != tc.open {
				t.Errorf("open mode, Host %q, %s: status %d, want %d", tc.host, path, got, tc.open)
			}
		}
	}
	if body := get(strict, "attacker.example", "/").Body.String(); !strings.Contains(body, `"attacker.example"`) || !strings.Contains(body, "--addr") {
		t.Errorf("the refusal should name the host and the way out: %s", body)
	}
}

// TestOccupancyAPI checks the A100 example against numbers derived here from
// the A100's limits (cc 8.0: 164 KiB of shared memory per SM at the largest
// carveout, 1 KiB reserved per block, 65536 registers, 64 warps), and that
// bad fields come back as field errors.
func TestOccupancyAPI(t *testing.T) {
	h := newTestServer(t, true)
	w := get(h, "localhost", "/api/occupancy?device=a100&regs=64&smem=48K")
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	a := decode(t, w)
	view := a.View.(map[string]any)
	res := view["result"].(map[string]any)
	// shared memory: floor(164 KiB / (48+1) KiB) = 3; registers: 65536 / (64*256) = 4.
	if res["blocks_per_sm"] != 3.0 || res["limiters"] != "shared_memory" || res["blocks_by_regs"] != 4.0 {
		t.Errorf("A100, 64 regs, 48K: got %v blocks limited by %v (%v by registers); want 3 by shared_memory (4 by registers)", res["blocks_per_sm"], res["limiters"], res["blocks_by_regs"])
	}
	if want := "gpucalc occupancy --device a100 --regs 64 --smem 48K"; a.CLI != want {
		t.Errorf("cli = %q, want %q", a.CLI, want)
	}
	if len(a.Charts) != 1 || len(a.Tables) < 2 {
		t.Fatalf("%d charts and %d tables, want the three-panel figure and the tables", len(a.Charts), len(a.Tables))
	}
	if c := a.Charts[0]; !strings.HasPrefix(c.SVG, "<svg") || !strings.Contains(c.Title, "limited by shared memory") {
		t.Errorf("chart %s %q: not the SVG figure of this configuration: %.80s", c.ID, c.Title, c.SVG)
	}

	// The form's fields are the CLI's flags: ?smem=48K is --smem 48K,
	// ?arch=sm_80 --arch.
	for _, q := range []string{"device=a100&regs=64&smem=48K", "arch=sm_80&regs=64&smem=48K"} {
		a := decode(t, get(h, "localhost", "/api/occupancy?"+q))
		res, _ := a.View.(map[string]any)["result"].(map[string]any)
		if res["blocks_per_sm"] != 3.0 || res["limiters"] != "shared_memory" {
			t.Errorf("%s: %v blocks limited by %v (errors %q); want 3 by shared_memory", q, res["blocks_per_sm"], res["limiters"], a.Errors)
		}
	}
	if w := get(h, "localhost", "/?smem=48K"); !strings.Contains(w.Body.String(), `name="smem" value="48K"`) {
		t.Errorf("the page given ?smem=48K does not fill the shared memory field")
	}

	for _, tc := range []struct{ query, field, want string }{
		{"regs=300", "regs", "255"},
		{"threads=2000", "threads", "1024"},
		{"threads=x", "threads", "--threads x: a whole number"},
		{"smem=48Q", "smem", "unknown unit"},
		{"smem=300K", "smem", "opt-in maximum"},
		{"smem=64K&static-smem=64K", "static-smem", "48 KiB"},
		{"carveout=50", "carveout", "50%"},
		{"device=h900", "device", "unknown device"},
		{"device=mi300x", "device", "not an NVIDIA GPU"},
		{"device=sm_80&cluster=2", "cluster", "give --device instead of --arch"},
		{"device=a100&cluster=2", "cluster", "9.0"},
	} {
		refuses(t, h, "/api/occupancy?"+tc.query, tc.field, tc.want)
	}
}

func TestRooflineAPI(t *testing.T) {
	h := newTestServer(t, true)
	for _, tc := range []struct{ query, cli, field, want string }{
		{"source=ops&ops=matmul+m%3D4096+n%3D4096+k%3D4096+dtype%3Dbf16&devices=h100", "gpucalc roofline --op 'matmul m=4096 n=4096 k=4096 dtype=bf16' --device h100", "", ""},
		{"source=example&example=llama3-8b-decode.yaml&devices=h100,a100", "gpucalc roofline --workload examples/llama3-8b-decode.yaml --devices h100,a100", "", ""},
		{"source=ops&ops=matmul+m%3D4&devices=h100", "", "ops", "--op 'matmul m=4'"},
		{"source=example&example=../../etc/passwd&devices=h100", "", "example", "no example"},
		{"source=workload&workload=name%3A+x&devices=h100", "", "workload", "no ops"},
		{"source=ops&devices=", "", "devices", "--devices '': empty"},
	} {
		w := get(h, "localhost", "/api/roofline?"+tc.query)
		a := decode(t, w)
		if tc.field != "" {
			if !strings.Contains(a.Errors[tc.field], tc.want) {
				t.Errorf("%s: errors %q, want %q in field %s", tc.query, a.Errors, tc.want, tc.field)
			}
			continue
		}
		if w.Code != 200 || a.CLI != tc.cli || len(a.Charts) != 1 || len(a.Tables) == 0 {
			t.Errorf("%s: status %d, cli %q (want %q), %d charts, %d tables; errors %q", tc.query, w.Code, a.CLI, tc.cli, len(a.Charts), len(a.Tables), a.Errors)
		}
	}
}

func TestModelAPI(t *testing.T) {
	h := newTestServer(t, true)
	for _, tc := range []struct{ query, field, want string }{
		{"devices=h100&tp=0", "tp", "1 or more"},
		{"devices=h100&batch=x", "batch", "--batch x: a whole number"},
		{"devices=h100&weights=int3", "weights", "unknown data type"},
		{"devices=h100&model=gpt-9", "model", "gpt-9"},
		{"devices=h100&source=config&config=%7B", "config", "config.json"},
		{"devices=", "devices", "--devices '': empty"},
		{"devices=b200&model=deepseek-r1&tp=8&ep=2&moe-tp=2", "ep", "expected a multiple of tp=8"},
	} {
		refuses(t, h, "/api/model?"+tc.query, tc.field, tc.want)
	}
	ep := get(h, "localhost", "/api/model?devices=b200&model=deepseek-r1&tp=2&ep=4&moe-tp=2")
	if a := decode(t, ep); ep.Code != 200 || a.CLI != "gpucalc model deepseek-r1 --device b200 --tp 2 --ep 4 --moe-tp 2" {
		t.Errorf("expert parallelism: status %d, cli %q, errors %q", ep.Code, a.CLI, a.Errors)
	}
	w := get(h, "localhost", "/api/model?devices=h100")
	a := decode(t, w)
	if w.Code != 200 || len(a.Tables) != 1 || len(a.Charts) != 1 || a.CLI != "gpucalc model llama-3.1-8b --device h100" {
		t.Errorf("default model: status %d, %d tables, %d charts, cli %q, errors %q", w.Code, len(a.Tables), len(a.Charts), a.CLI, a.Errors)
	}
}

func post(t *testing.T, h http.Handler, name string, data []byte, device string) *httptest.ResponseRecorder {
	t.Helper()
	body, kind := multipartBody(t, name, data, device)
	r := httptest.NewRequest(http.MethodPost, "/api/report", bytes.NewReader(body))
	r.Host = "127.0.0.1:8080"
	r.Header.Set(markerHeader, "1")
	r.Header.Set("Content-Type", kind)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestReportAPI(t *testing.T) {
	h := newTestServer(t, true)
	wl, err := os.ReadFile("testdata/resnet50-bottleneck.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := decode(t, post(t, h, "block.yaml", wl, "a100"))
	if !strings.HasPrefix(a.HTML, "<!DOCTYPE html>") || !strings.Contains(a.HTML, "A100") || a.CLI != "gpucalc check block.yaml --format html --device a100-sxm4-80gb" {
		t.Errorf("workload upload: cli %q, errors %q, html %.60q", a.CLI, a.Errors, a.HTML)
	}
	csv := testfile.Gunzip(t, "testdata/ncu_raw.csv.gz")
	a = decode(t, post(t, h, "profile.txt", csv, ""))
	if len(a.Tables) == 0 || len(a.Charts) != 1 || a.CLI != "gpucalc ncu profile.txt" {
		t.Errorf("ncu upload: cli %q, %d tables, %d charts, errors %q", a.CLI, len(a.Tables), len(a.Charts), a.Errors)
	}
	a = decode(t, post(t, h, "bad.yaml", []byte("name: [\n"), ""))
	if a.Errors["file"] == "" {
		t.Errorf("a broken workload gives no field error: %+v", a.Errors)
	}
	w := post(t, h, "big.csv", bytes.Repeat([]byte("x"), MaxUpload+1), "")
	if a := decode(t, w); !strings.Contains(a.Errors["file"], "64 MiB") {
		t.Errorf("an upload over the limit: status %d, errors %q", w.Code, a.Errors)
	}
}

// TestPagesKeyboard: every control of every page has a label (for= its id,
// or wrapped in a label), so screen readers name it and Tab reaches it.
func TestPagesKeyboard(t *testing.T) {
	h := newTestServer(t, true)
	for _, path := range []string{"/", "/roofline", "/model", "/reports"} {
		w := get(h, "localhost", path)
		if w.Code != 200 {
			t.Fatalf("%s: status %d", path, w.Code)
		}
		body := w.Body.String()
		for _, tag := range []string{"<input", "<select", "<textarea"} {
			for rest := body; ; {
				i := strings.Index(rest, tag)
				if i < 0 {
					break
				}
				el := rest[i : i+strings.Index(rest[i:], ">")]
				rest = rest[i+len(tag):]
				id := attr(el, "id")
				wrapped := strings.LastIndex(body[:len(body)-len(rest)], "<label>") > strings.LastIndex(body[:len(body)-len(rest)], "</label>")
				if !wrapped && (id == "" || !strings.Contains(body, `for="`+id+`"`)) {
					t.Errorf("%s: control without a label: %s>", path, el)
				}
				if strings.Contains(el, "tabindex=\"-1\"") {
					t.Errorf("%s: control taken out of the Tab order: %s>", path, el)
				}
			}
		}
	}
}

func attr(el, name string) string {
	i := strings.Index(el, " "+name+`="`)
	if i < 0 {
		return ""
	}
	v := el[i+len(name)+3:]
	return v[:strings.Index(v, `"`)]
}

// BenchmarkOccupancyAPI is the server's share of the 50 ms input-to-repaint
// target: one answer of the occupancy form (the calculation, cliffs, three
// sweeps and their SVG charts, JSON).
func BenchmarkOccupancyAPI(b *testing.B) {
	h := newTestServer(b, true)
	for b.Loop() {
		if w := get(h, "localhost", "/api/occupancy?device=a100&regs=64&smem=48K"); w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

// FuzzAPI: whatever the query, the occupancy and roofline APIs answer JSON,
// with a view or with errors, never a failure of the server (a blank page).
func FuzzAPI(f *testing.F) {
	for _, q := range []string{
		"device=a100&regs=64&smem=48K",
		"device=sm_90&threads=1024&regs=255&static-smem=48K&smem=227K&carveout=100%25&cluster=16&barriers=16&max-threads=1024",
		"device=h100&threads=-1&regs=1e9&smem=-5&carveout=0K&cluster=-3",
		"device=%00&threads=&regs=",
		"source=ops&ops=matmul+m%3D1+n%3D1+k%3D1%0Aattention+b%3D1+h%3D1+s%3D1+d%3D1&devices=h100,mi300x",
		"source=workload&workload=name%3A+x%0Aops%3A%0A++-+name%3A+a%0A++++op%3A+copy+n%3D1&devices=t4",
	} {
		f.Add(q)
	}
	h := newTestServer(f, true)
	f.Fuzz(func(t *testing.T, q string) {
		for _, api := range []string{"/api/occupancy", "/api/roofline"} {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.URL.Path, r.URL.RawQuery = api, q
			r.Host = "localhost"
			r.Header.Set(markerHeader, "1")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			var a answer
			if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
				t.Fatalf("%s?%s: status %d, not JSON: %.200s", api, q, w.Code, w.Body)
			}
			if w.Code != 200 && w.Code != http.StatusUnprocessableEntity || (a.View == nil) == (len(a.Errors) == 0) {
				t.Fatalf("%s?%s: status %d, view %v, errors %q", api, q, w.Code, a.View != nil, a.Errors)
			}
		}
	})
}

// TestReportGzip: the Reports page reads gzip uploads as the CLI does, by
// the name under .gz and the content after decompression: an Nsight Compute
// export as ncu_raw.csv.gz (issue 24) or with no telling name, a workload
// as YAML.
func TestReportGzip(t *testing.T) {
	h := newTestServer(t, true)
	raw, err := os.ReadFile("testdata/ncu_raw.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ncu_raw.csv.gz", "profile.gz", "export"} {
		a := decode(t, post(t, h, name, raw, ""))
		if len(a.Errors) > 0 || len(a.Tables) == 0 || len(a.Charts) != 1 || a.CLI != "gpucalc ncu "+name {
			t.Errorf("%s: cli %q, %d tables, %d charts, errors %q; want the ncu report", name, a.CLI, len(a.Tables), len(a.Charts), a.Errors)
		}
	}
	wl, err := os.ReadFile("testdata/resnet50-bottleneck.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(wl)
	zw.Close()
	for _, name := range []string{"block.yaml.gz", "block.gz"} {
		a := decode(t, post(t, h, name, z.Bytes(), "a100"))
		if !strings.HasPrefix(a.HTML, "<!DOCTYPE html>") || len(a.Errors) > 0 {
			t.Errorf("%s: errors %q, html %.60q; want the check page", name, a.Errors, a.HTML)
		}
	}
	gz := func(b []byte) []byte {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		return z.Bytes()
	}
	trace := gz([]byte(`{"traceEvents": []}`))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"ncu_raw.csv.gz", raw, "ncu"}, {"profile.gz", raw, "ncu"}, {"profile", raw, "ncu"},
		{"step.json.gz", trace, "trace"}, {"step.gz", trace, "trace"}, {"step", trace, "trace"},
		{"block.yaml.gz", z.Bytes(), "workload"}, {"block.gz", z.Bytes(), "workload"},
		{"broken.gz", []byte{0x1f, 0x8b, 0}, "trace"},
	} {
		if got := kindOf(tc.name, tc.data); got != tc.want {
			t.Errorf("kindOf(%s) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestModelSideBySideGap: as on the command line, a device that cannot run
// the model's types (bf16 on a T4) says so in its column and the other
// answers; a model that fits on no device draws no chart.
func TestModelSideBySideGap(t *testing.T) {
	h := newTestServer(t, true)
	w := get(h, "localhost", "/api/model?source=builtin&model=llama-3.1-8b&devices=h100,t4")
	a := decode(t, w)
	if w.Code != 200 || len(a.Errors) > 0 || !strings.Contains(w.Body.String(), "n/a: no bf16 tensor cores") || len(a.Charts) != 1 {
		t.Errorf("h100,t4: %d, errors %v, %d charts; want the H100's answer, the T4's gap and a chart", w.Code, a.Errors, len(a.Charts))
	}
	w = get(h, "localhost", "/api/model?source=builtin&model=llama-3.1-70b&devices=l4")
	a = decode(t, w)
	if w.Code != 200 || len(a.Charts) != 0 || !strings.Contains(w.Body.String(), "DOES NOT FIT") || strings.Contains(w.Body.String(), "TTFT") {
		t.Errorf("70B on an L4: %d, %d charts; want the verdict, no times, no chart", w.Code, len(a.Charts))
	}
}
