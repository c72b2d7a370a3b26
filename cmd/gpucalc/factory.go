package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/escape"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
)

// factory holds what every command shares: the streams, the environment,
// the global flags, and the one helper per I/O task (open an input, read a
// workload, resolve devices, render). A command copies what it needs into
// its options struct; tests build a factory over buffers.
type factory struct {
	In          io.Reader
	Out, ErrOut io.Writer
	Getenv      func(string) string

	// width is the number of columns table output must fit: the
	// terminal's when standard output is one, else 0 (no limit: pipes and
	// files get full tables). It is decided once, at the edge (newFactory).
	width int

	// Global flags.
	format      string
	deviceFiles []string
	datasheet   bool
	verbose     bool
	wide        bool

	catalog *devices.Catalog
}

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks an error in how gpucalc was called: a flag, an argument
// or a flag's value (exit code 2, with a pointer to --help). Everything else
// (a file that cannot be read, input that does not parse, a failed check)
// exits 1.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usage makes an error that names a query's fields (query.FieldError) a
// usage error of one line, the first field's; any other error is returned
// as it is.
func usage(err error) error {
	if fs := query.Fields(err); fs != nil {
		return usageError{&fs[0]}
	}
	return err
}

// usagef returns a usage error.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// OutFormat parses --format against the formats a command supports (nil:
// table, markdown, json, csv) and checks the chart flags of a command that
// draws (--plot, --size, --dpi): a mistake in either stops the command
// before any work is done.
func (f *factory) OutFormat(allowed []reports.Format, charts ...*chartFlags) (reports.Format, error) {
	form, err := reports.ParseFormat(f.format, allowed)
	if err != nil {
		return "", usageError{fmt.Errorf("--format: %w", err)}
	}
	for _, c := range charts {
		if err := c.check(); err != nil {
			return "", err
		}
	}
	return form, nil
}

// Render writes tables in format form to standard output.
func (f *factory) Render(form reports.Format, tables ...reports.Table) error {
	return reports.Render(f.Out, form, f.tableWidth(), tables...)
}

// JSON writes v to standard output as indented JSON.
func (f *factory) JSON(v any) error { return reports.JSON(f.Out, v) }

// Warn writes a one-line warning to standard error.
func (f *factory) Warn(format string, args ...any) {
	fmt.Fprintf(f.ErrOut, "gpucalc: warning: %s\n", escape.Terminal(fmt.Sprintf(format, args...)))
}

// Catalog returns the built-in catalog with the user's device files applied:
// first every *.yaml in $GPUCALC_DEVICES (sorted), then each --device-file.
func (f *factory) Catalog() (*devices.Catalog, error) {
	if f.catalog != nil {
		return f.catalog, nil
	}
	c, err := devices.Builtin()
	if err != nil {
		return nil, err
	}
	var files []string
	if dir := f.Getenv("GPUCALC_DEVICES"); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("GPUCALC_DEVICES=%s: not a directory; unset it or point it at a directory of device files", dir)
		}
		matches, err := filepath.Glob(filepath.Join(dir, "*.y*ml"))
		if err != nil {
			return nil, fmt.Errorf("GPUCALC_DEVICES=%s: %w", dir, err)
		}
		sort.Strings(matches)
		files = append(files, matches...)
	}
	files = append(files, f.deviceFiles...)
	for _, name := range files {
		data, _, err := f.ReadAll(name, devices.MaxFileBytes)
		if err != nil {
			return nil, fmt.Errorf("device file %w", err)
		}
		if c, err = c.With(name, data); err != nil {
			return nil, err
		}
	}
	f.catalog = c
	return c, nil
}

// target is one device a command runs on, and where its name came from
// ("" when the user named it; devices.OriginDefault or OriginEnv).
type target = devices.Chosen

// Rooflines resolves device flags (Devices) and builds each device's
// roofline model.
func (f *factory) Rooflines(o deviceFlags) ([]target, []*roofline.Model, error) {
	ts, err := f.Devices(o)
	if err != nil {
		return nil, nil, err
	}
	ms := make([]*roofline.Model, len(ts))
	for i, t := range ts {
		if ms[i], err = roofline.New(t.Device); err != nil {
			return nil, nil, err
		}
	}
	return ts, ms, nil
}

// devicesOf lists the devices of ts.
func devicesOf(ts []target) []devices.Device {
	out := make([]devices.Device, len(ts))
	for i, t := range ts {
		out[i] = t.Device
	}
	return out
}

// Lookup finds a device in the catalog (with the user's files) by name,
// honouring --datasheet. An unknown name is a usage error.
func (f *factory) Lookup(name string) (devices.Device, error) {
	c, err := f.Catalog()
	if err != nil {
		return devices.Device{}, err
	}
	d, err := c.Lookup(name)
	if err != nil {
		return devices.Device{}, usageError{err}
	}
	if f.datasheet {
		d = d.Datasheet()
	}
	return d, nil
}

// Devices resolves device flags to the devices to run on (devices.Choice:
// one rule for every command and the web); a mistake is a usage error.
func (f *factory) Devices(o deviceFlags) ([]target, error) {
	c, err := f.Catalog()
	if err != nil {
		return nil, err
	}
	ts, err := f.choice(o).Resolve(c, f.datasheet)
	return ts, usage(err)
}

// choice maps the device flags onto the devices.Choice they state.
func (f *factory) choice(o deviceFlags) devices.Choice {
	return devices.Choice{Device: o.device, Devices: o.devices, DeviceGiven: o.deviceSet(), DevicesGiven: o.devicesSet(), Env: f.Getenv("GPUCALC_DEVICE")}
}

// Device resolves device flags that name one GPU.
func (f *factory) Device(o deviceFlags) (target, error) {
	ts, err := f.Devices(o)
	if err != nil {
		return target{}, err
	}
	return ts[0], nil
}

// deviceOver resolves --device given for a measured input, which names the
// GPUs it ran on (empty where it does not say): a --device that
// contradicts the input is used, with the warning warn (of the device
// given, the one named, the device given again).
func (f *factory) deviceOver(o deviceFlags, named []string, warn string) (devices.Device, string, error) {
	t, err := f.Device(o)
	if err != nil {
		return devices.Device{}, "", err
	}
	for _, n := range named {
		if n == "" {
			continue
		}
		if d, err := f.Lookup(n); err != nil || d.Name != t.Name {
			f.Warn(warn, t.Name, n, t.Name)
			break
		}
	}
	return t.Device, "from --device", nil
}

// batchDevice is the roofline model of the device a batch row's device
// column names: the column, else $GPUCALC_DEVICE, else the default
// (devices.Choice.Name).
func (f *factory) batchDevice(column string) (*roofline.Model, error) {
	name, _ := devices.Choice{Device: column, DeviceGiven: column != "", Env: f.Getenv("GPUCALC_DEVICE")}.Name()
	d, err := f.Lookup(name)
	if err != nil {
		return nil, err
	}
	return roofline.New(d)
}

// Output writes a command's result, every command's last call: JSON the
// view, CSV the section of records that --section picks (sec is nil for a
// command with one), table and Markdown the tables; records and tables
// are built only when needed. notes are about what the command wrote beside
// its output (a chart file, the points a chart left out): under the first
// table, or on standard error for JSON and CSV, which must stay
// machine-readable.
//
// Two kinds of view write themselves: a page (check's --format html) and a
// stream (a batch whose rows are written as they are answered, in every
// format).
func (f *factory) Output(form reports.Format, sec *sectionFlag, notes []string, view any, tables, records func() []reports.Table) error {
	if err := sec.check(form); err != nil {
		return err
	}
	if s, ok := view.(stream); ok {
		return s(f.Out, form, f.tableWidth())
	}
	switch form {
	case reports.FormatHTML:
		p, ok := view.(page)
		if !ok {
			return usagef("--format html: this command writes table, markdown, json or csv")
		}
		return p.HTML(f.Out)
	case reports.FormatJSON:
		f.notes(nil, notes)
		return f.JSON(view)
	case reports.FormatCSV:
		f.notes(nil, notes)
		name := "" // the first section, unless --section names one
		if sec.set() {
			name = sec.name
		}
		t, ok := reports.Section(records(), name)
		if !ok {
			msg := fmt.Sprintf("--section %s: this run has no %s section", name, name)
			if sec != nil && sec.needs[name] != "" {
				msg += "; it needs " + sec.needs[name]
			}
			return usageError{errors.New(msg)}
		}
		return f.Render(form, t)
	}
	t := tables()
	f.notes(t, notes)
	return f.Render(form, t...)
}

// page is a view that writes itself as an HTML page.
type page interface{ HTML(w io.Writer) error }

// stream is a view that writes itself as it is computed, in format form
// fitted to width columns: a batch too long to hold.
type stream func(w io.Writer, form reports.Format, width int) error

// notes adds notes under the first table, or writes them to standard
// error when there is none.
func (f *factory) notes(tables []reports.Table, notes []string) {
	if len(tables) > 0 {
		tables[0].Notes = append(tables[0].Notes, notes...)
		return
	}
	for _, n := range notes {
		fmt.Fprintln(f.ErrOut, "gpucalc: "+escape.Terminal(n))
	}
}

// execute calls runF, which tests pass to check the parsed options, or
// else the command's own run.
func execute[T any](opts *T, runF, own func(*T) error) error {
	if runF != nil {
		return runF(opts)
	}
	return own(opts)
}
