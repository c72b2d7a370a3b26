package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

type ncuOptions struct {
	device string
	chart  chartOptions
}

func (a *app) newNCUCmd() *cobra.Command {
	var opt ncuOptions
	cmd := &cobra.Command{
		Use:   "ncu FILE|-",
		Short: "Put kernels profiled by Nsight Compute against the device's ceilings",
		Long: `Read an Nsight Compute export and show, per profiled kernel: its short name,
block and grid, duration, achieved FLOP/s by precision (FMA = 2 FLOPs; tensor
cores from the tensor-operation counters), DRAM, L2 and L1 bytes with the
arithmetic intensity at each level, the share of the device's ceilings
reached, and occupancy: Nsight Compute's theoretical and achieved figures
beside the one gpucalc computes from the launch statistics.

The export is what 'ncu --csv --page raw' prints; redirect it to a file or pipe
it in with '-'. Lines before the CSV header (==PROF==, the program's output)
are skipped. The full set (--set full) has every metric used; with fewer
sections, what is missing is listed. The device comes from the export's
device name; --device overrides it. Shares are of the catalog's dense
datasheet peaks and bandwidths (decimal: 1 TB/s = 1e12 B/s).`,
		Example: `  ncu --set full --csv --page raw python train.py > profile.csv
  gpucalc ncu profile.csv
  ncu --import report.ncu-rep --csv --page raw | gpucalc ncu - --format json
  gpucalc ncu profile.csv --device h100 --format markdown
  gpucalc ncu profile.csv --plot kernels.png`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.runNCU(argv[0], opt)
		},
	}
	a.addDeviceFlag(cmd, &opt.device)
	addChartFlags(cmd, &opt.chart)
	cmd.Flags().Lookup("device").Usage = "GPU `name` or alias from 'gpucalc devices' to measure against (default: the GPU the export names)"
	return cmd
}

func (a *app) runNCU(file string, opt ncuOptions) error {
	f, err := a.outFormat(nil)
	if err != nil {
		return err
	}
	chartFormat, chartSize, err := opt.chart.check()
	if err != nil {
		return err
	}
	var in io.Reader = a.stdin
	name := "standard input"
	if file != "-" {
		fh, err := os.Open(file)
		if err != nil {
			return err
		}
		defer fh.Close()
		in, name = fh, file
	}
	exp, err := ncu.Read(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ks, err := exp.Kernels()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	d, origin, err := a.ncuDevice(opt.device, ks)
	if err != nil {
		return err
	}
	as := make([]ncu.Analysis, len(ks))
	for i, k := range ks {
		as[i] = ncu.Analyze(k, d)
	}
	var notes []string
	if opt.chart.file != "" {
		c, skipped := reports.NCUChart(as, d)
		if notes, err = opt.chart.write(c, chartFormat, chartSize); err != nil {
			return err
		}
		notes = append(notes, skipped...)
	}
	if f == reports.FormatJSON {
		a.chartNotes(f, nil, notes)
		return reports.JSON(a.stdout, struct {
			Device       string         `json:"device"`
			DeviceOrigin string         `json:"device_origin"`
			Kernels      []ncu.Analysis `json:"kernels"`
		}{d.Name, origin, as})
	}
	tables := reports.NCU(as, d.Name, origin)
	a.chartNotes(f, tables, notes)
	return reports.Render(a.stdout, f, tables...)
}

// ncuDevice picks the device: --device, else the one the export names.
func (a *app) ncuDevice(flag string, ks []ncu.Kernel) (devices.Device, string, error) {
	names := ncu.DeviceNames(ks)
	if flag != "" {
		d, _, err := a.Device(flag)
		if err == nil && len(names) == 1 && names[0] != "" {
			if c, cerr := a.Catalog(); cerr == nil {
				if ed, lerr := c.Lookup(names[0]); lerr == nil && ed.Name != d.Name {
					fmt.Fprintf(a.stderr, "gpucalc: warning: --device %s (%s), but the export was profiled on %s; the shares are of the %s's ceilings\n", flag, d.Name, names[0], d.Name)
				}
			}
		}
		return d, "from --device", err
	}
	if len(names) != 1 {
		return devices.Device{}, "", fmt.Errorf("the export spans several GPUs (%s): pass --device NAME", strings.Join(names, ", "))
	}
	if names[0] == "" {
		return devices.Device{}, "", fmt.Errorf("the export has no device name (device__attribute_display_name): pass --device NAME")
	}
	c, err := a.Catalog()
	if err != nil {
		return devices.Device{}, "", err
	}
	d, err := c.Lookup(names[0])
	if err != nil {
		return devices.Device{}, "", fmt.Errorf("the export's device: %w; pass --device NAME, or add the GPU with --device-file", err)
	}
	return d, "from the export", nil
}
