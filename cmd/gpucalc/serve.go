package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/gpucalc/gpucalc/web"
	"github.com/spf13/cobra"
)

// annotationNoResults marks a command that prints no results, so --format
// does not apply (the output tests skip it).
const annotationNoResults = "no_results"

type serveOptions struct {
	f    *factory
	ctx  context.Context
	addr string
	open bool
}

func newCmdServe(f *factory, runF func(*serveOptions) error) *cobra.Command {
	opts := &serveOptions{f: f}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "The calculators in the browser: occupancy, roofline, model and reports",
		Long: `Serve gpucalc as a web app from this binary: occupancy (with the block-size,
register and shared-memory graphs, updated as you type), roofline (op specs,
an example or a pasted workload, on one or more devices), model (a built-in
or pasted config.json: memory, prefill and decode) and reports (drop an
Nsight Compute CSV, a torch.profiler trace or a workload YAML). Every answer
comes from the same code as the command line; the page shows the equivalent
gpucalc command, and its URL holds every input, so a link reproduces the view.

The app is self-contained (nothing is fetched from the network) and listens
on 127.0.0.1:8080 by default, answering only requests addressed to localhost,
127.0.0.1 or [::1] (against DNS rebinding). Its API answers only its own
pages: a request from a page of another origin, or without the header
X-Gpucalc-Request, is refused before any work. --addr listens elsewhere; on
an address other than loopback the Host check is off and anyone who can
reach the port can use the calculators: gpucalc says so. Uploads are limited
to 64 MiB (decompressed too), a request to 30 s and 5000 rows, four at once;
docs/serve.md lists the limits. --device-file and --datasheet apply as in
the other commands.`,
		Example: `  gpucalc serve
  gpucalc serve --open
  gpucalc serve --addr 127.0.0.1:9000
  gpucalc serve --addr 0.0.0.0:8080   # reachable from other machines`,
		Args:        args(cobra.NoArgs),
		Annotations: map[string]string{annotationNoResults: "the results are in the browser"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("format") {
				return usagef("--format does not apply to serve: the pages show tables and charts, and the API answers JSON")
			}
			if runF != nil {
				return runF(opts)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			opts.ctx = ctx
			return serveRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:8080", "`host:port` to listen on")
	cmd.Flags().BoolVar(&opts.open, "open", false, "open the app in the default browser")
	return cmd
}

func serveRun(opts *serveOptions) error {
	f := opts.f
	c, err := f.Catalog()
	if err != nil {
		return err
	}
	if _, port, err := net.SplitHostPort(opts.addr); err != nil {
		return usagef("--addr %q: expected HOST:PORT, such as 127.0.0.1:8080", opts.addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return usagef("--addr %s: the port is a number 0 to 65535 (0: any free port)", opts.addr)
	}
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return fmt.Errorf("--addr %s: cannot listen: %v", opts.addr, err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	ip := net.ParseIP(host)
	loopback := ip != nil && ip.IsLoopback()
	h, err := web.New(web.Options{Catalog: c, Datasheet: f.datasheet, LoopbackOnly: loopback})
	if err != nil {
		ln.Close()
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	if !loopback {
		url = "http://localhost:" + port + "/"
		fmt.Fprintf(f.ErrOut, "gpucalc serve: listening on %s, not only on this machine's loopback: anyone who can reach port %s can use it (the Host check is off)\n", ln.Addr(), port)
	}
	fmt.Fprintf(f.ErrOut, "gpucalc serve: %s (Ctrl+C to stop)\n", url)
	if opts.open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(f.ErrOut, "gpucalc serve: could not open a browser (%v); open %s yourself\n", err, url)
		}
	}
	srv := web.HTTPServer(h)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-opts.ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// openBrowser opens url in the user's browser.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	return cmd.Start()
}
