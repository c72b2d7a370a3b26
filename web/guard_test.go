package web

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/rows"
)

// newLimitedServer is the app with the given limits (tests shorten them)
// and its handler.
func newLimitedServer(t testing.TB, l limits) (*server, http.Handler) {
	t.Helper()
	c, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServer(Options{Catalog: c, LoopbackOnly: true}, l)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.handler()
	if err != nil {
		t.Fatal(err)
	}
	return s, h
}

// countingBody is a request body that records whether it was read.
type countingBody struct {
	io.Reader
	read int
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	b.read += n
	return n, err
}

// multipartBody is the reports form with the file and the device.
func multipartBody(t testing.TB, name string, data []byte, device string) ([]byte, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.WriteField("device", device)
	mw.Close()
	return body.Bytes(), mw.FormDataContentType()
}

// TestCrossSite: an API request that a page of another origin could make
// (Fetch Metadata or Origin saying so, or without the header no form or
// image can send) is refused with 403 before any work: its body is not
// read and no calculation starts. The pages themselves may still be
// linked to from anywhere, and the app's own requests are answered.
func TestCrossSite(t *testing.T) {
	s, h := newLimitedServer(t, defaultLimits)
	wl, err := os.ReadFile("testdata/resnet50-bottleneck.yaml")
	if err != nil {
		t.Fatal(err)
	}
	form, formType := multipartBody(t, "block.yaml", wl, "h100")
	own := map[string]string{markerHeader: "1", "Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:8080"}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(out, kv[i])
			} else {
				out[kv[i]] = kv[i+1]
			}
		}
		return out
	}
	for _, tc := range []struct {
		what, method, path string
		headers            map[string]string
		want               int
	}{
		{"the app's own read", "GET", "/api/occupancy?device=a100", own, 200},
		{"the app's own upload", "POST", "/api/report", own, 200},
		{"curl with the header", "GET", "/api/model?devices=h100", map[string]string{markerHeader: "1"}, 200},
		{"typed into the address bar with the header set", "GET", "/api/occupancy", with(own, "Sec-Fetch-Site", "none", "Origin", ""), 200},
		{"a link to a page from another site", "GET", "/roofline?devices=h100", map[string]string{"Sec-Fetch-Site": "cross-site"}, 200},

		{"a read from another site", "GET", "/api/occupancy?device=a100", with(own, "Sec-Fetch-Site", "cross-site"), 403},
		{"a read from another port of this host", "GET", "/api/model?devices=h100", with(own, "Sec-Fetch-Site", "same-site"), 403},
		{"an image tag (no Origin, no header)", "GET", "/api/roofline?devices=h100", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image"}, 403},
		{"an image tag in a browser without Fetch Metadata", "GET", "/api/roofline?devices=h100", nil, 403},
		{"a form posted from another site", "POST", "/api/report", map[string]string{"Origin": "http://attacker.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"a form posted from another port", "POST", "/api/report", map[string]string{"Origin": "http://127.0.0.1:9999"}, 403},
		{"a form posted from a sandboxed frame", "POST", "/api/report", map[string]string{"Origin": "null"}, 403},
		{"a fetch from another origin that got the header past no preflight", "POST", "/api/report", with(own, "Origin", "http://localhost:8080", "Sec-Fetch-Site", ""), 403},
		{"a form posted without the header", "POST", "/api/report", with(own, markerHeader, ""), 403},
		{"a CORS preflight", "OPTIONS", "/api/report", map[string]string{"Origin": "http://attacker.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-gpucalc-request"}, 403},
	} {
		before := s.started.Load()
		body := &countingBody{Reader: bytes.NewReader(form)}
		r := httptest.NewRequest(tc.method, tc.path, body)
		r.Host = "127.0.0.1:8080"
		if tc.method == "POST" {
			r.Header.Set("Content-Type", formType)
		}
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: status %d, want %d: %.300s", tc.what, w.Code, tc.want, w.Body)
			continue
		}
		if tc.want != 403 {
			continue
		}
		if body.read != 0 || s.started.Load() != before {
			t.Errorf("%s: refused after work: %d bytes of the body read, %d calculations started", tc.what, body.read, s.started.Load()-before)
		}
		if a := decode(t, w); !strings.Contains(a.Errors[""], "refused") {
			t.Errorf("%s: the refusal does not say why: %q", tc.what, a.Errors)
		}
	}
}

// TestSecurityHeaders: every response forbids framing and sniffing, sends
// no Referer, and loads nothing from elsewhere; the pages run no inline
// script (which the policy would block) and no inline event handler.
func TestSecurityHeaders(t *testing.T) {
	h := newTestServer(t, true)
	for _, path := range []string{"/", "/roofline", "/model", "/reports", "/static/app.js", "/static/style.css", "/api/occupancy?device=a100", "/api/model?devices=h900", "/nowhere"} {
		w := get(h, "localhost", path)
		hd := w.Header()
		csp := hd.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: Content-Security-Policy %q lacks %q", path, csp, want)
			}
		}
		_, script, _ := strings.Cut(csp, "script-src")
		if script, _, _ = strings.Cut(script, ";"); strings.Contains(csp, "unsafe-eval") || strings.Contains(script, "unsafe-inline") {
			t.Errorf("%s: the policy lets inline or eval'd script run: %q", path, csp)
		}
		for k, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
			if got := hd.Get(k); got != want {
				t.Errorf("%s: %s %q, want %q", path, k, got, want)
			}
		}
		if !strings.HasPrefix(hd.Get("Content-Type"), "text/html") {
			continue
		}
		body := strings.ToLower(w.Body.String())
		for rest := body; ; {
			i := strings.Index(rest, "<script")
			if i < 0 {
				break
			}
			tag := rest[i : i+strings.Index(rest[i:], ">")]
			if !strings.Contains(tag, " src=") {
				t.Errorf("%s: an inline script, which the policy blocks: %s>", path, tag)
			}
			rest = rest[i+1:]
		}
		for _, handler := range []string{" onclick=", " onload=", " oninput=", " onchange=", " onsubmit=", " onerror=", "javascript:"} {
			if strings.Contains(body, handler) {
				t.Errorf("%s: an inline handler (%s), which the policy blocks", path, strings.TrimSpace(handler))
			}
		}
	}
}

// TestNotMultipart: a POST that is not a multipart form gets a message that
// says what to send, not the multipart reader's own words.
func TestNotMultipart(t *testing.T) {
	h := newTestServer(t, true)
	for _, tc := range []struct {
		ctype, body string
		status      int
		want        string
	}{
		{"application/x-www-form-urlencoded", "file=x&device=h100", 415, "multipart/form-data"},
		{"text/plain", "name: x", 415, "multipart/form-data"},
		{"", "name: x", 415, "multipart/form-data"},
		{"application/json", `{"file": "x"}`, 415, "multipart/form-data"},
		{"multipart/form-data", "--x\r\n", 400, "no boundary"},
		{"multipart/form-data; boundary=x", "", 422, "choose or drop a file"},
		{"multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"file\"\r\nno blank line", 400, "not well-formed multipart"},
		{"multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.yaml\"\r\n\r\nname: x", 400, "reading the file"},
		{"multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"device\"\r\n\r\nh100\r\n--x--\r\n", 422, "choose or drop a file"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/api/report", strings.NewReader(tc.body))
		r.Host = "localhost"
		r.Header.Set(markerHeader, "1")
		if tc.ctype != "" {
			r.Header.Set("Content-Type", tc.ctype)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		a := decode(t, w)
		if w.Code != tc.status || !strings.Contains(a.Errors["file"], tc.want) || strings.Contains(a.Errors["file"], "NextPart") {
			t.Errorf("Content-Type %q: status %d, errors %q; want %d and %q", tc.ctype, w.Code, a.Errors, tc.status, tc.want)
		}
	}
}

// TestNoTempFiles: an upload, however large, is read in memory within its
// limit: nothing is written to the temporary directory (the multipart
// reader of net/http spills a file over 32 MiB there, and only a real
// server removes it).
func TestNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	h := newTestServer(t, true)
	for _, n := range []int{40 << 20, MaxUpload + 1} {
		w := post(t, h, "big.csv", bytes.Repeat([]byte("x"), n), "")
		if n > MaxUpload && w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("%d MiB: status %d, want 413", n>>20, w.Code)
		}
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("an upload left %s in the temporary directory", e.Name())
	}
}

// bomb is a small gzip file that decompresses to head and then n bytes
// of fill: gzip members of 64 MiB of fill each, one after another (a
// reader of gzip reads them as one stream, as gzip -d does).
func bomb(t testing.TB, head string, fill byte, n int64) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	zw.Write([]byte(head))
	zw.Close()
	member, ok := bombMembers[fill]
	if !ok {
		var b bytes.Buffer
		zw, _ = gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(bytes.Repeat([]byte{fill}, 64<<20))
		zw.Close()
		member = b.Bytes()
		bombMembers[fill] = member
	}
	for i := int64(0); i < n>>26; i++ {
		out.Write(member)
	}
	return out.Bytes()
}

// bombMembers holds each fill's gzip member, made once.
var bombMembers = map[byte][]byte{}

// TestGzipBomb: a gzip upload of about 6 MiB that expands to 6 GiB (a JSON
// string that never ends, whitespace, a CSV field without end, blank
// lines, a workload's comment) is refused by the decompressed size, as it
// streams: the server reads no more than maxInflated of it and allocates a
// small multiple of that, not gigabytes.
func TestGzipBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 64 MiB per case")
	}
	h := newTestServer(t, true)
	const expanded = 6 << 30
	for _, tc := range []struct {
		name, head string
		fill       byte
	}{
		{"step.json.gz", `{"traceEvents": [{"name": "`, 'a'},
		{"step.json.gz", `{"traceEvents": [`, ' '},
		{"profile.csv.gz", `"ID","Kernel Name","`, 'a'},
		{"profile.csv.gz", "", '\n'},
		{"block.yaml.gz", "# ", 'a'},
	} {
		data := bomb(t, tc.head, tc.fill, expanded)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := post(t, h, tc.name, data, "h100")
		runtime.ReadMemStats(&after)
		a := decode(t, w)
		alloc := after.TotalAlloc - before.TotalAlloc
		if w.Code != http.StatusUnprocessableEntity || a.Errors["file"] == "" {
			t.Errorf("%s of %q: status %d, errors %q; want the file refused", tc.name, tc.head, w.Code, a.Errors)
		}
		if alloc > 6*maxInflated {
			t.Errorf("%s of %q (%.1f MiB, %d GiB decompressed): %d MiB allocated, want at most %d MiB", tc.name, tc.head, float64(len(data))/(1<<20), expanded>>30, alloc>>20, 6*maxInflated>>20)
		}
		t.Logf("%s of %q, %.1f MiB: %d MiB allocated: %s", tc.name, tc.head, float64(len(data))/(1<<20), alloc>>20, a.Errors["file"])
	}
}

// TestWorkBounds: requests that would cost minutes of CPU or hundreds of
// megabytes of answer are refused before the work: a config of 16M layers
// over every device, 9,000 ops on 17 devices, a workload to check with more
// ops than an answer takes.
func TestWorkBounds(t *testing.T) {
	s, h := newLimitedServer(t, defaultLimits)
	var all []string
	for _, d := range s.Catalog.Devices() {
		all = append(all, d.Key())
	}
	layers := func(n string, devices ...string) string {
		return url.Values{"source": {"config"}, "devices": {strings.Join(devices, ",")}, "config": {`{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": ` + n +
			`, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "intermediate_size": 14336}`}}.Encode()
	}
	manyOps := url.Values{"source": {"ops"}, "devices": {strings.Join(all[:min(17, len(all))], ",")}, "ops": {strings.Repeat("copy n=1\n", 9000)}}.Encode()
	var wl strings.Builder
	wl.WriteString("name: many\nops:\n")
	for i := range maxRows + 1 {
		fmt.Fprintf(&wl, "  - {name: a%d, op: copy n=1}\n", i)
	}
	for _, tc := range []struct{ path, field, want string }{
		{"/api/model?" + layers("16777216", all...), "config", "more than 1024"},
		{"/api/model?" + layers("1e18", all...), "config", "num_hidden_layers"},
		{"/api/roofline?" + manyOps, "ops", "at most 5000 rows"},
	} {
		refuses(t, h, tc.path, tc.field, tc.want)
	}
	w := post(t, h, "many.yaml", []byte(wl.String()), "h100")
	if a := decode(t, w); w.Code != http.StatusUnprocessableEntity || !strings.Contains(a.Errors["file"], "at most 5000 rows") {
		t.Errorf("a workload of %d ops: status %d, errors %.300q", maxRows+1, w.Code, a.Errors)
	}
	// An export of more kernels than an answer takes stops as its rows
	// stream, before they are held (a million narrow rows, 16 MiB).
	export := "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n" + strings.Repeat("\"1\",\"k\",\"1000\"\n", 1_000_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w = post(t, h, "many.csv", []byte(export), "h100")
	runtime.ReadMemStats(&after)
	if a := decode(t, w); w.Code != http.StatusUnprocessableEntity || !strings.Contains(a.Errors["file"], "at most 5000 kernels") {
		t.Errorf("an export of a million kernels: status %d, errors %.300q", w.Code, a.Errors)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*uint64(len(export)) {
		t.Errorf("an export of a million kernels, %d MiB: %d MiB allocated before the refusal", len(export)>>20, alloc>>20)
	}
	// At the limit the answer comes.
	if w := get(h, "localhost", "/api/model?"+layers("1024", "h100", "h200")); w.Code != 200 {
		t.Errorf("a config of 1024 layers: status %d: %.300s", w.Code, w.Body)
	}
}

// TestRequestLimits: past its deadline a request stops at the next check
// and gets 503; a request whose client left gets no work; an answer over
// the size limit is refused; a full server answers 503 with Retry-After.
func TestRequestLimits(t *testing.T) {
	l := defaultLimits
	l.deadline = time.Nanosecond
	_, h := newLimitedServer(t, l)
	w := get(h, "localhost", "/api/roofline?source=example&example=llama3-8b-prefill.yaml&devices=h100,a100,h200")
	if a := decode(t, w); w.Code != http.StatusServiceUnavailable || !strings.Contains(a.Errors[""], "took more than") || !strings.Contains(a.Errors[""], "gpucalc roofline") {
		t.Errorf("past the deadline: status %d, errors %q; want 503 naming the command line", w.Code, a.Errors)
	}
	// The trace reader stops at the deadline too.
	tr, err := os.ReadFile("../trace/testdata/trace_llama1b_infer.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	if w := post(t, h, "step.json.gz", tr, ""); w.Code != http.StatusServiceUnavailable {
		t.Errorf("a trace past the deadline: status %d: %.200s", w.Code, w.Body)
	}

	s, h := newLimitedServer(t, defaultLimits)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodGet, "/api/roofline?source=example&example=llama3-8b-prefill.yaml&devices=h100", nil).WithContext(ctx)
	r.Host, r.Header = "localhost", http.Header{markerHeader: {"1"}}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Body.Len() != 0 || s.started.Load() != 0 {
		t.Errorf("the client left: the server still started %d calculations and answered %.100s", s.started.Load(), rec.Body)
	}

	l = defaultLimits
	l.answer = 4 << 10
	_, h = newLimitedServer(t, l)
	if w := get(h, "localhost", "/api/occupancy?device=a100"); w.Code != http.StatusUnprocessableEntity || !strings.Contains(decode(t, w).Errors[""], "more than the 4 KiB") {
		t.Errorf("an answer over the size limit: status %d: %.200s", w.Code, w.Body)
	}

	// A full server: one slot, held by an upload whose body is still
	// coming.
	l = defaultLimits
	l.busy, l.wait = 1, 10*time.Millisecond
	s, h = newLimitedServer(t, l)
	pr, pw := io.Pipe()
	slow := httptest.NewRequest(http.MethodPost, "/api/report", pr)
	slow.Host = "localhost"
	slow.Header.Set(markerHeader, "1")
	slow.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); h.ServeHTTP(httptest.NewRecorder(), slow) }()
	pw.Write([]byte("--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.yaml\"\r\n\r\n"))
	for s.started.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	w = get(h, "localhost", "/api/occupancy?device=a100")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || !strings.Contains(decode(t, w).Errors[""], "busy") {
		t.Errorf("a full server: status %d, Retry-After %q: %.200s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	pw.CloseWithError(io.ErrUnexpectedEOF)
	wg.Wait()
	if w := get(h, "localhost", "/api/occupancy?device=a100"); w.Code != 200 {
		t.Errorf("after the slot freed: status %d", w.Code)
	}
}

// TestHTTPServer: the server drops connections that trickle or idle, and
// bounds the headers; its write timeout leaves room for a request's
// deadline.
func TestHTTPServer(t *testing.T) {
	srv := HTTPServer(http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Errorf("timeouts: header %v, read %v, idle %v, max header bytes %d; want all set", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
	if srv.WriteTimeout < srv.ReadTimeout+requestDeadline {
		t.Errorf("write timeout %v: shorter than reading (%v) and the work (%v)", srv.WriteTimeout, srv.ReadTimeout, requestDeadline)
	}
	// The second sweep held 50 slow-body and 50 idle connections for 50 s.
	if srv.ReadTimeout >= 50*time.Second || srv.IdleTimeout >= 50*time.Second {
		t.Errorf("read timeout %v, idle timeout %v: a slow or idle client is held 50 s or more", srv.ReadTimeout, srv.IdleTimeout)
	}
	if srv.MaxHeaderBytes < maxQuery {
		t.Errorf("max header bytes %d: a query of %d bytes is allowed", srv.MaxHeaderBytes, maxQuery)
	}
}

// TestInflated: the streaming limit takes a file of exactly the limit,
// refuses one byte more, and keeps refusing (a parser that reads on after
// the error gets no more of the stream); a request's reader stops once its
// context ends.
func TestInflated(t *testing.T) {
	gz := func(n int) io.Reader {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(bytes.Repeat([]byte("x"), n))
		zw.Close()
		z, err := gzip.NewReader(&b)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	const limit = 100000
	if data, err := io.ReadAll(inflated{rows.Limit(gz(limit), limit)}); err != nil || len(data) != limit {
		t.Errorf("exactly the limit: %d bytes, %v", len(data), err)
	}
	z := inflated{rows.Limit(gz(limit+1), limit)}
	if _, err := io.ReadAll(z); !errors.Is(err, errInflated) {
		t.Errorf("one byte over the limit: %v, want %v", err, errInflated)
	}
	if n, err := z.Read(make([]byte, 10)); n != 0 || !errors.Is(err, errInflated) {
		t.Errorf("read after the error: %d bytes, %v", n, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	in, err := open(ctx, bomb(t, "", 'x', 1<<26))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Read(make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := in.Read(make([]byte, 1024)); !errors.Is(err, context.Canceled) {
		t.Errorf("after the client left: %v, want %v", err, context.Canceled)
	}
}

// TestHTTPServerDrops opens 50 connections on loopback that trickle their
// headers, 50 that trickle an upload's body and 50 that sit idle after an
// answer, and sees every one closed by the server within its timeout (the
// timeouts shortened; 3 s of slack for a loaded machine); the server
// answers a new request after.
func TestHTTPServerDrops(t *testing.T) {
	to := timeouts{header: 300 * time.Millisecond, body: 500 * time.Millisecond, idle: 300 * time.Millisecond, answer: 300 * time.Millisecond}
	l := defaultLimits
	l.wait = 100 * time.Millisecond
	_, h := newLimitedServer(t, l)
	srv := httpServer(h, to)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()

	const n, slack = 50, 3 * time.Second
	upload := "POST /api/report HTTP/1.1\r\nHost: localhost\r\n" + markerHeader + ": 1\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: 1000000\r\n\r\n" +
		"--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\n"
	cases := []struct {
		name  string
		first string        // sent at once
		idle  bool          // read the answer, then send nothing
		limit time.Duration // closed within this of the first byte
	}{
		{"slow headers", "GET / HTTP/1.1\r\nHost: localhost\r\n", false, to.header},
		{"slow body", upload, false, to.header + to.body},
		{"idle keep-alive", "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", true, to.idle},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var wg sync.WaitGroup
			held := make([]time.Duration, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					held[i] = hold(t, addr, c.first, c.idle)
				}()
			}
			wg.Wait()
			for i, d := range held {
				if d > c.limit+slack {
					t.Errorf("connection %d held for %v, past its %v timeout", i, d.Round(time.Millisecond), c.limit)
					break
				}
			}
		})
	}
	if w := get(h, "localhost", "/api/occupancy?device=h100"); w.Code != http.StatusOK {
		t.Errorf("after: status %d", w.Code)
	}
}

// hold opens a connection to addr, sends first, and then a byte every 50
// ms (or, idle, reads one answer and sends nothing), until the server
// closes it; it returns how long the connection was open (from the end of
// the answer, idle). A connection still open after 10 s counts as 10 s.
func hold(t *testing.T, addr, first string, idle bool) time.Duration {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer conn.Close()
	start := time.Now()
	conn.SetDeadline(start.Add(10 * time.Second))
	if _, err := io.WriteString(conn, first); err != nil {
		t.Error(err)
		return 0
	}
	closed := make(chan struct{})
	br := bufio.NewReader(conn)
	if idle {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Error(err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Errorf("the first answer: status %d, close %v", resp.StatusCode, resp.Close)
		}
		start = time.Now()
	} else {
		go func() {
			for {
				select {
				case <-closed:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := conn.Write([]byte("a")); err != nil {
					return
				}
			}
		}()
	}
	io.Copy(io.Discard, br) // until the server closes the connection
	close(closed)
	return time.Since(start)
}
