// Package web serves gpucalc's calculators as one offline web app: HTML
// pages, one small script and a JSON API. The API answers with the same
// JSON views the CLI's --format json prints (package reports), the tables
// the CLI renders and the charts as SVG; nothing is computed in the browser.
// The assets are embedded; nothing is fetched from the network.
package web

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/units"
)

//go:embed assets
var assets embed.FS

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
	pages  *template.Template
	limits limits
	// busy holds a token for each API request running.
	busy chan struct{}
	// started counts the API requests that got past the guards: the work
	// done (a refused request must leave it unchanged).
	started atomic.Int64
}

// New returns the app's handler.
func New(o Options) (http.Handler, error) {
	s, err := newServer(o, defaultLimits)
	if err != nil {
		return nil, err
	}
	return s.handler()
}

func newServer(o Options, l limits) (*server, error) {
	if o.Catalog == nil {
		return nil, errors.New("web: no device catalog")
	}
	pages, err := template.New("").ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	return &server{Options: o, pages: pages, limits: l, busy: make(chan struct{}, l.busy)}, nil
}

// handler routes the pages and the API; every API call runs under the
// server's limits.
func (s *server) handler() (http.Handler, error) {
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.occupancyPage)
	mux.HandleFunc("GET /roofline", s.rooflinePage)
	mux.HandleFunc("GET /model", s.modelPage)
	mux.HandleFunc("GET /reports", s.reportsPage)
	mux.HandleFunc("GET /deploy", s.deployPage)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.Handle("GET /api/occupancy", s.api(func(r *http.Request) (answer, error) { return s.occupancy(s.occupancyForm(r)) }))
	mux.Handle("GET /api/roofline", s.api(s.roofline))
	mux.Handle("GET /api/model", s.api(s.model))
	mux.Handle("GET /api/report", s.api(s.report))
	mux.Handle("GET /api/deploy", s.api(s.deploy))
	mux.Handle("POST /api/report", s.api(s.report))
	return s.guard(mux), nil
}

// api turns a calculation into an API handler, under the server's limits
// (see limit). The answer is JSON of at most limits.answer bytes; a
// request past its deadline gets 503, one whose client left nothing.
func (s *server) api(calc func(*http.Request) (answer, error)) http.Handler {
	return s.limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := calc(r)
		if ctxErr := r.Context().Err(); ctxErr != nil {
			if errors.Is(ctxErr, context.DeadlineExceeded) {
				refuse(w, http.StatusServiceUnavailable, fmt.Sprintf("gpucalc serve: the request took more than %v, the server's limit per request; ask for less, or run the command line%s", s.limits.deadline, cliHint(a.CLI)))
			}
			return
		}
		if err != nil {
			writeAnswer(w, http.StatusInternalServerError, answer{Errors: fieldErrors{"": "gpucalc: " + err.Error()}})
			return
		}
		status := a.status
		if status == 0 {
			status = http.StatusOK
			if len(a.Errors) > 0 {
				status = http.StatusUnprocessableEntity
			}
		}
		body, err := encode(a)
		if err != nil {
			writeAnswer(w, http.StatusInternalServerError, answer{Errors: fieldErrors{"": "gpucalc: " + err.Error()}})
			return
		}
		if len(body) > s.limits.answer {
			refuse(w, http.StatusUnprocessableEntity, fmt.Sprintf("gpucalc serve: the answer is %s, more than the %s the server sends; ask for fewer ops or devices, or run the command line%s", units.FormatSize(int64(len(body))), units.FormatSize(int64(s.limits.answer)), cliHint(a.CLI)))
			return
		}
		writeJSON(w, status, body)
	}))
}

// cliHint is ": CLI" for a message that ends by pointing at the command line.
func cliHint(cli string) string {
	if cli == "" {
		return ""
	}
	return ": " + cli
}

// tooMany says why n rows of what are more than an answer takes ("" when
// they are not), pointing at the command line that has no such limit.
func tooMany(n int, what, cli string) string {
	if n <= maxRows {
		return ""
	}
	return fmt.Sprintf("%d %s: the server answers at most %d rows per request; ask for fewer, or run the command line%s", n, what, maxRows, cliHint(cli))
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
	// status is the HTTP status when not the usual: 200, or 422 with
	// Errors.
	status int
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
		t = t.Collected()
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

// formInt maps a whole-number form field onto a question's int field; a
// value that is none is the field's error.
func formInt(f map[string]string, field string, errs *query.Errors) int {
	v, err := strconv.Atoi(strings.TrimSpace(f[field]))
	if err != nil || v > math.MaxInt32 || v < math.MinInt32 {
		*errs = append(*errs, query.FieldError{Field: field, Value: f[field], Allowed: "a whole number"})
	}
	return v
}

// formErrors are a question's field errors under the form's field names
// (rename maps a question's field to the form's where they differ), each
// worded as the CLI words it.
func formErrors(es query.Errors, rename map[string]string) fieldErrors {
	out := fieldErrors{}
	for i := range es {
		field := es[i].Field
		if f, ok := rename[field]; ok {
			field = f
		}
		out.add(field, &es[i])
	}
	return out
}

// fieldErrors collects what is wrong with each field.
type fieldErrors map[string]string

func (e fieldErrors) add(field string, err error) {
	if _, ok := e[field]; !ok {
		e[field] = err.Error()
	}
}

func encode(a answer) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(a)
	return buf.Bytes(), err
}

// writeAnswer writes an answer that is small by construction (a refusal,
// an error).
func writeAnswer(w http.ResponseWriter, status int, a answer) {
	body, _ := encode(a)
	writeJSON(w, status, body)
}

// writeJSON writes an API answer within defaultTimeouts.answer: a client
// that does not read it is dropped then, not at the server's write timeout.
// (A recorder in tests has no deadline to set.)
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(defaultTimeouts.answer))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// device looks a device up as the CLI's --device does (devices.Choice,
// with --datasheet).
func (s *server) device(name string) (devices.Device, error) {
	ds, err := devices.Named([]string{name}).Resolve(s.Catalog, s.Datasheet)
	if err != nil {
		return devices.Device{}, err
	}
	return ds[0].Device, nil
}

// defaultKey is the default device's key, what a form's device field
// starts at.
func (s *server) defaultKey() string {
	d, _ := s.Catalog.Lookup(devices.Default)
	return d.Key()
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

// formValues returns the request's values, first value of each, with defaults
// for those not given.
func formValues(r *http.Request, defaults map[string]string) map[string]string {
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
