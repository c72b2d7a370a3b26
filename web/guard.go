package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// The server's limits. The calculators answer in milliseconds for any
// real input; these stop inputs made to cost minutes or gigabytes.
const (
	// MaxUpload is the largest file the reports page takes: as much as the
	// CLI reads from a file (a torch.profiler trace of a training step can
	// be tens of MiB).
	MaxUpload = 64 << 20
	// maxInflated is the most a gzip upload may decompress to: as much as
	// an upload that is not compressed. (A trace compresses about tenfold:
	// a gzip trace over about 5 MiB is refused, and the message points at
	// the CLI, which reads more.)
	maxInflated = MaxUpload
	// maxQuery bounds a GET request's query: a pasted workload travels in it.
	maxQuery = 256 << 10
	// maxRows bounds the rows an answer may have: ops × devices on the
	// roofline page, the kernels of an export, the distinct ops of a trace,
	// the ops of a workload to check. A chart of 5000 points and its tables
	// take a few seconds; the examples have 9 to 14.
	maxRows = 5000
	// maxAnswer bounds an answer's JSON.
	maxAnswer = 32 << 20
	// requestDeadline is the time one API request may take; work stops at the
	// next check after it, and when the client goes away.
	requestDeadline = 30 * time.Second
	// maxBusy is how many API requests run at once (each may hold an
	// upload in memory); busyWait how long a request waits for its turn
	// before it is answered 503.
	maxBusy  = 4
	busyWait = 2 * time.Second
)

// markerHeader must come with every API request. A browser sends a header
// of a page's own choosing to another origin only after a CORS preflight,
// which this server never grants; so no form, image or script on another
// site can make the server work, even in a browser that sends no Fetch
// Metadata. The pages' script sends it.
const markerHeader = "X-Gpucalc-Request"

// securityHeaders go with every response: the pages load nothing from
// elsewhere, no page of another site may frame them (clickjacking), no
// response is sniffed into another type, and no URL leaks in a Referer.
// Styles stay inline-able: gonum/plot's SVG and the check page's HTML
// carry style attributes. The check page's srcdoc frame inherits the
// policy.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
		"connect-src 'self'; frame-src 'self' data: about:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
	"X-Frame-Options":        "DENY",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
}

// timeouts are the connection timeouts HTTPServer sets (tests shorten
// them). A connection that trickles its headers or its body, or sits idle
// between requests, is closed when its timeout passes, so that a few
// hundred slow or idle clients hold no more than a goroutine each for
// seconds (and an upload's busy slot for at most the body's time).
type timeouts struct {
	header, body, idle, answer time.Duration
}

var defaultTimeouts = timeouts{
	// The request line and headers: a browser or curl sends them at once.
	header: 5 * time.Second,
	// The whole body: the largest upload, MaxUpload, at 3.4 MB/s or
	// faster (loopback or any local network).
	body: 20 * time.Second,
	// Between requests on a keep-alive connection: a page's script sends
	// its requests seconds apart, and a browser reconnects unseen.
	idle: 15 * time.Second,
	// Writing one answer once it is computed: maxAnswer at 3.4 MB/s.
	answer: 10 * time.Second,
}

// HTTPServer returns the http.Server that serves h, with timeouts: a
// client that trickles its headers or its body, or sits idle, is dropped.
func HTTPServer(h http.Handler) *http.Server { return httpServer(h, defaultTimeouts) }

func httpServer(h http.Handler, t timeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.header,
		// Go's read timeout runs from the request's first byte: headers
		// and body together.
		ReadTimeout: t.header + t.body,
		// Go's write timeout runs from the end of the headers: the body,
		// the work (requestDeadline), writing the answer. An API answer
		// gets its own, shorter deadline once computed (writeJSON).
		WriteTimeout: t.body + requestDeadline + t.answer,
		IdleTimeout:  t.idle,
		// The query line (up to maxQuery) and the headers.
		MaxHeaderBytes: maxQuery + 64<<10,
	}
}

// limits are the limits a server applies (tests shorten them).
type limits struct {
	deadline time.Duration
	busy     int
	wait     time.Duration
	answer   int
}

var defaultLimits = limits{deadline: requestDeadline, busy: maxBusy, wait: busyWait, answer: maxAnswer}

// guard applies the Host check, the size limits and the cross-site checks,
// and sets the headers that keep the pages self-contained. It reads
// nothing of a body: a refused request costs no work.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		if s.LoopbackOnly && !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("gpucalc serve: refused a request for host %q: this server answers only localhost, 127.0.0.1 and [::1] (start it with --addr to listen elsewhere)", r.Host), http.StatusMisdirectedRequest)
			return
		}
		if len(r.URL.RawQuery) > maxQuery {
			http.Error(w, fmt.Sprintf("gpucalc serve: the query is %d KiB, more than the %d KiB allowed; upload the workload on the Reports page instead", len(r.URL.RawQuery)>>10, maxQuery>>10), http.StatusRequestURITooLong)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			if msg := crossSite(r); msg != "" {
				refuse(w, http.StatusForbidden, "gpucalc serve: refused: "+msg)
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxUpload+64<<10)
		next.ServeHTTP(w, r)
	})
}

// crossSite says why an API request may come from a page of another origin
// ("" when it comes from this server's own pages or from outside a
// browser). The pages themselves may be linked to from anywhere: only
// their script, from this origin, makes the server work.
func crossSite(r *http.Request) string {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return fmt.Sprintf("the request comes from a page of another site or origin (Sec-Fetch-Site: %s); only this server's own pages may use its API", site)
	}
	if origin := r.Header.Get("Origin"); origin != "" && !strings.EqualFold(origin, "http://"+r.Host) {
		return fmt.Sprintf("the request comes from a page at %q, not from http://%s; only this server's own pages may use its API", origin, r.Host)
	}
	if r.Header.Get(markerHeader) == "" {
		return fmt.Sprintf("an API request must carry the header %s (the pages send it; with curl, add -H '%s: 1'), so that no page of another site can make this server work", markerHeader, markerHeader)
	}
	return ""
}

// limit runs an API request under the server's limits: at most s.busy at
// once (a request waits up to s.wait for its turn, then gets 503), within
// s.deadline, and abandoned when the client goes away (the request's
// context, which the calculations check).
func (s *server) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.busy <- struct{}{}:
		default:
			t := time.NewTimer(s.limits.wait)
			defer t.Stop()
			select {
			case s.busy <- struct{}{}:
			case <-r.Context().Done():
				return // the client left while waiting
			case <-t.C:
				w.Header().Set("Retry-After", "2")
				refuse(w, http.StatusServiceUnavailable, fmt.Sprintf("gpucalc serve is busy: %d requests are running; try again in a moment", s.limits.busy))
				return
			}
		}
		defer func() { <-s.busy }()
		if r.Context().Err() != nil {
			return // the client left before its turn
		}
		s.started.Add(1)
		ctx, cancel := context.WithTimeout(r.Context(), s.limits.deadline)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// refuse answers an API request that was not served, as the pages show
// errors: JSON with the message for the form as a whole.
func refuse(w http.ResponseWriter, status int, msg string) {
	writeAnswer(w, status, answer{Errors: fieldErrors{"": msg}})
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
