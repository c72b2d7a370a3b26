// Package chart draws gpucalc's figures with gonum/plot: the roofline
// chart, the occupancy panels and sweeps, the simulated latency-hiding
// curves and the op-time bars of the review page. It takes plain view
// structs, knows nothing of commands, and is the only package that imports
// gonum/plot; it turns gonum/plot's panics into errors. Write draws a chart
// to a writer; WriteFile writes a file atomically (a temporary file renamed
// over the target), refusing a PNG over MaxPixels before drawing.
package chart

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart is anything gpucalc draws: a Roofline, an Occupancy, a Sweep or a
// Simulation. Write one with Write or WriteFile.
type Chart interface {
	// draw draws the chart on dc; gonum/plot may panic, which Write
	// turns into an error.
	draw(dc draw.Canvas) error
	// defaultSize is the size used when Options.Size is zero.
	defaultSize() Size
}

// Options say how to write a chart: Format is "png", "svg" or "pdf"
// (empty: from the file name in WriteFile); a zero Size is the chart's
// own default; DPI applies to PNG (zero means DefaultDPI).
type Options struct {
	Format string
	Size   Size
	DPI    int
}

// MaxPixels caps a PNG chart's pixels (width × height), so that a
// large size at a high dpi is refused before any memory is taken.
const MaxPixels = 100_000_000

// Chart size and dpi ranges, checked by Options.Check.
const (
	minChartDPI, maxChartDPI = 10, 1200
	minChartW, maxChartW     = 4.0, 200.0
	minChartH, maxChartH     = 3.0, 200.0
)

// resolve fills in the defaults of c.
func (o Options) resolve(c Chart) Options {
	if o.Size == (Size{}) {
		o.Size = c.defaultSize()
	}
	if o.DPI == 0 {
		o.DPI = DefaultDPI
	}
	o.Format = strings.ToLower(o.Format)
	return o
}

// Pixels is the PNG size in pixels of a chart of size s at dpi.
func (s Size) Pixels(dpi int) (w, h int64) {
	px := func(cm float64) int64 { return int64(math.Ceil(cm / 2.54 * float64(dpi))) }
	return px(s.Width), px(s.Height)
}

// Check refuses options that cannot be drawn: an unknown format, a size
// out of range, a dpi out of range, or a PNG over MaxPixels. A zero
// Size or DPI is allowed (the defaults).
func (o Options) Check() error {
	switch strings.ToLower(o.Format) {
	case "png", "svg", "pdf":
	default:
		return fmt.Errorf("chart format %q: expected png, svg or pdf", o.Format)
	}
	if s := o.Size; s != (Size{}) && !(s.Width >= minChartW && s.Width <= maxChartW && s.Height >= minChartH && s.Height <= maxChartH) {
		return fmt.Errorf("chart size %gx%g cm: width 4-200 cm and height 3-200 cm expected, such as 16x10cm", s.Width, s.Height)
	}
	if o.DPI != 0 && (o.DPI < minChartDPI || o.DPI > maxChartDPI) {
		return fmt.Errorf("chart dpi %d: expected %d to %d", o.DPI, minChartDPI, maxChartDPI)
	}
	if strings.EqualFold(o.Format, "png") && o.Size != (Size{}) {
		dpi := o.DPI
		if dpi == 0 {
			dpi = DefaultDPI
		}
		if w, h := o.Size.Pixels(dpi); w*h > MaxPixels {
			return fmt.Errorf("a %gx%g cm chart at %d dpi is %dx%d pixels, %.0f megapixels; the limit is %d: lower the dpi or the size",
				o.Size.Width, o.Size.Height, dpi, w, h, float64(w*h)/1e6, MaxPixels/1_000_000)
		}
	}
	return nil
}

// Write draws c to w as opt says.
func Write(w io.Writer, c Chart, opt Options) (err error) {
	if err := opt.Check(); err != nil {
		return err
	}
	opt = opt.resolve(c)
	if err := opt.Check(); err != nil { // the chart's default size at this dpi
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing the chart: %v", r)
		}
	}()
	wd, ht := vg.Length(opt.Size.Width)*vg.Centimeter, vg.Length(opt.Size.Height)*vg.Centimeter
	var cv vg.CanvasWriterTo
	switch opt.Format {
	case "png":
		img := vgimg.NewWith(vgimg.UseWH(wd, ht), vgimg.UseDPI(opt.DPI))
		cv = vgimg.PngCanvas{Canvas: img}
	case "svg":
		cv = vgsvg.New(wd, ht)
	case "pdf":
		p := vgpdf.New(wd, ht)
		p.EmbedFonts(true)
		cv = p
	}
	if err := c.draw(draw.New(cv)); err != nil {
		return err
	}
	_, err = cv.WriteTo(w)
	return err
}

// WriteFile draws c to the file path. An empty opt.Format is taken
// from the name (.png, .svg, .pdf). The chart goes to a temporary file in
// the same directory, renamed over path only once complete, so a failure
// leaves an existing file as it was.
func WriteFile(path string, c Chart, opt Options) (err error) {
	if opt.Format == "" {
		if opt.Format, err = FileFormat(path); err != nil {
			return err
		}
	}
	if err := opt.resolve(c).Check(); err != nil {
		return err
	}
	mode, err := TargetMode(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err := Write(bw, c, opt); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return nil
}

// TargetMode checks that a chart may be written to path and returns the
// permissions it gets: an existing file's own (a private 0600 file stays
// private when the chart replaces it), else 0644. A directory is an error
// that says so, before any drawing.
func TargetMode(path string) (os.FileMode, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0o644, nil
	case err != nil:
		return 0, fmt.Errorf("chart %s: %w", path, err)
	case st.IsDir():
		return 0, fmt.Errorf("chart %s is a directory: give a file name, such as %s", path, filepath.Join(path, "chart"+filepath.Ext(path)))
	case !st.Mode().IsRegular():
		return 0, fmt.Errorf("chart %s is not a regular file (%s): give a file name", path, st.Mode().Type())
	}
	return st.Mode().Perm(), nil
}

// FileFormat returns the chart format a file name asks for (.png, .svg,
// .pdf).
func FileFormat(file string) (string, error) {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".png":
		return "png", nil
	case ".svg":
		return "svg", nil
	case ".pdf":
		return "pdf", nil
	}
	return "", fmt.Errorf("chart file %q: the name must end in .png, .svg or .pdf", file)
}

// Size is a chart's size in centimetres.
type Size struct{ Width, Height float64 }

// DefaultSize is the roofline chart's size when none is given.
var DefaultSize = Size{16, 10}

// DefaultDPI is the PNG resolution when none is given.
const DefaultDPI = 200

// ParseSize parses WIDTHxHEIGHT with a unit: 16x10cm, 160x100mm, 6x4in.
func ParseSize(s string) (Size, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	scale := 0.0
	for _, u := range []struct {
		suffix string
		cm     float64
	}{{"cm", 1}, {"mm", 0.1}, {"in", 2.54}} {
		if strings.HasSuffix(t, u.suffix) {
			t, scale = strings.TrimSuffix(t, u.suffix), u.cm
			break
		}
	}
	w, h, ok := strings.Cut(t, "x")
	if scale == 0 || !ok {
		return Size{}, fmt.Errorf("size %q: expected WIDTHxHEIGHT with cm, mm or in, such as 16x10cm", s)
	}
	wv, err1 := strconv.ParseFloat(w, 64)
	hv, err2 := strconv.ParseFloat(h, 64)
	if err1 != nil || err2 != nil || !(wv*scale >= minChartW && wv*scale <= maxChartW && hv*scale >= minChartH && hv*scale <= maxChartH) {
		return Size{}, fmt.Errorf("size %q: width 4-200 cm and height 3-200 cm expected, such as 16x10cm", s)
	}
	return Size{wv * scale, hv * scale}, nil
}
