// Package web serves gpucalc's calculators as one offline web app: HTML
// pages, one small script and a JSON API. The API answers with the same
// JSON views the CLI's --format json prints (package reports), the tables
// the CLI renders and the charts as SVG; nothing is computed in the browser.
// The assets are embedded; nothing is fetched from the network.
package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/reports"
)

//go:embed assets
var assets embed.FS

// Limits on what a request may carry.
const (
	// MaxUpload is the largest file the reports page takes: as much as the
	// CLI reads from a file (a torch.profiler trace of a training step can
	// be tens of MiB).
	MaxUpload = 64 << 20
	// maxQuery bounds a GET request's query: a pasted workload travels in it.
	maxQuery = 256 << 10
)

// Options configure the server.
type Options struct {
	// Catalog is the device catalog, with the user's device files applied.
	Catalog *devices.Catalog
	// Datasheet ignores measured ceilings, as the CLI's --datasheet does.
	Datasheet bool
	// LoopbackOnly refuses requests whose Host header is not a loopback
	// name or address (localhost, 127.0.0.1, [::1]): a page on another site
	// cannot reach the server by pointing its own name at 127.0.0.1 (DNS
	// rebinding). Set it whenever the server listens on a loopback address.
	LoopbackOnly bool
}

type server struct {
	Options
	pages *template.Template
}

// New returns the app's handler.
func New(o Options) (http.Handler, error) {
	if o.Catalog == nil {
		return nil, errors.New("web: no device catalog")
	}
	pages, err := template.New("").ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	s := &server{Options: o, pages: pages}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.occupancyPage)
	mux.HandleFunc("GET /roofline", s.rooflinePage)
	mux.HandleFunc("GET /model", s.modelPage)
	mux.HandleFunc("GET /reports", s.reportsPage)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /api/occupancy", s.apiOccupancy)
	mux.HandleFunc("GET /api/roofline", s.apiRoofline)
	mux.HandleFunc("GET /api/model", s.apiModel)
	mux.HandleFunc("GET /api/report", s.apiReport)
	mux.HandleFunc("POST /api/report", s.apiReport)
	return s.guard(mux), nil
}

// guard applies the Host check and the size limits, and the headers that
// keep the pages self-contained.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.LoopbackOnly && !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("gpucalc serve: refused a request for host %q: this server answers only localhost, 127.0.0.1 and [::1] (start it with --addr to listen elsewhere)", r.Host), http.StatusMisdirectedRequest)
			return
		}
		if len(r.URL.RawQuery) > maxQuery {
			http.Error(w, fmt.Sprintf("gpucalc serve: the query is %d KiB, more than the %d KiB allowed; upload the workload on the Reports page instead", len(r.URL.RawQuery)>>10, maxQuery>>10), http.StatusRequestURITooLong)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxUpload+64<<10)
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-src 'self' data: about:; connect-src 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names this machine by a
// loopback name or address.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// answer is what every API call returns. View is the CLI's JSON view;
// Errors maps a form field to what is wrong with it ("" for the form as a
// whole).
type answer struct {
	View   any               `json:"view,omitempty"`
	Tables []table           `json:"tables,omitempty"`
	Charts []figure          `json:"charts,omitempty"`
	HTML   string            `json:"html,omitempty"`
	CLI    string            `json:"cli,omitempty"`
	Errors map[string]string `json:"errors,omitempty"`
}

type table struct {
	Title  string     `json:"title"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
	Notes  []string   `json:"notes,omitempty"`
}

// figure is a chart in an answer: its id in the page, its title and an
// inline SVG element.
type figure struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	SVG   string `json:"svg"`
}

// rooflineSize is the size of the page's roofline charts.
var rooflineSize = chart.Size{Width: 20, Height: 12.5}

// newFigure draws c as an inline SVG element of the given size (zero: the
// chart's own).
func newFigure(id, title string, c chart.Chart, size chart.Size) (figure, error) {
	var buf bytes.Buffer
	if err := chart.Write(&buf, c, chart.Options{Format: "svg", Size: size}); err != nil {
		return figure{}, err
	}
	return figure{ID: id, Title: title, SVG: inlineSVG(buf.String())}, nil
}

func tablesOf(ts []reports.Table) []table {
	out := make([]table, len(ts))
	for i, t := range ts {
		out[i] = table{t.Title, t.Header, t.Rows, t.Notes}
	}
	return out
}

// inlineSVG drops the XML prologue so that the SVG can stand in the page.
func inlineSVG(s string) string {
	if i := strings.Index(s, "<svg"); i >= 0 {
		return s[i:]
	}
	return s
}

// fieldErrors collects what is wrong with each field.
type fieldErrors map[string]string

func (e fieldErrors) add(field string, err error) {
	if _, ok := e[field]; !ok {
		e[field] = err.Error()
	}
}

func reply(w http.ResponseWriter, a answer) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if len(a.Errors) > 0 {
		w.WriteHeader(http.StatusUnprocessableEntity)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(a)
}

// fail answers an error of the form as a whole (a failure of gpucalc, not
// of an input).
func fail(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	_ = json.NewEncoder(w).Encode(answer{Errors: map[string]string{"": "gpucalc: " + err.Error()}})
}

// device looks a device up, as the CLI's --device does (with --datasheet).
func (s *server) device(name string) (devices.Device, error) {
	d, err := s.Catalog.Lookup(name)
	if err != nil {
		return d, err
	}
	if s.Datasheet {
		d = d.Datasheet()
	}
	return d, nil
}

// deviceKey is the short name a device goes by in URLs and command lines:
// its first alias.
func deviceKey(d devices.Device) string {
	if len(d.Aliases) > 0 {
		return d.Aliases[0]
	}
	return d.Name
}

// option is one entry of a device picker.
type option struct {
	Value, Label string
	Selected     bool
}

// page is what the page templates are given.
type page struct {
	Title, Nav string
	Q          map[string]string
	Devices    []option
	Archs      []option
	Examples   []option
	Checks     []option
}

func (s *server) render(w http.ResponseWriter, name string, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := s.pages.ExecuteTemplate(w, name, p); err != nil {
		http.Error(w, "gpucalc serve: "+err.Error(), http.StatusInternalServerError)
	}
}

// query returns the request's values, first value of each, with defaults
// for those not given.
func query(r *http.Request, defaults map[string]string) map[string]string {
	q := map[string]string{}
	for k, v := range defaults {
		q[k] = v
	}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			q[k] = v[0]
		}
	}
	return q
}

// shellQuote quotes a command-line argument for a POSIX shell when needed.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,/%=:+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
