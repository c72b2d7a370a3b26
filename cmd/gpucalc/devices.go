package main

import (
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

type devicesOptions struct {
	f *factory
}

func newCmdDevices(f *factory, runF func(*devicesOptions) error) *cobra.Command {
	opts := &devicesOptions{f: f}
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the GPUs in the catalog",
		Long: `List the GPUs in the catalog with their headline figures. Peaks are dense
(no 2:4 sparsity); bandwidth is decimal (TB/s = 1e12 B/s), memory sizes binary
(GiB). The ridge point is the dense BF16 tensor peak (FP16 on parts without
BF16) divided by DRAM bandwidth, in FLOP per byte.

Device files (--device-file, repeatable, and every *.yaml in the directory
$GPUCALC_DEVICES) add GPUs or override fields of a catalog entry by name;
docs/devices.md documents the schema.`,
		Example: `  gpucalc devices
  gpucalc devices --format markdown
  gpucalc devices --device-file my-h100.yaml
  GPUCALC_DEVICES=~/.config/gpucalc/devices gpucalc devices`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, devicesRun)
		},
	}
	cmd.AddCommand(newCmdDevicesShow(f, nil), newCmdDevicesArchs(f, nil))
	return cmd
}

func devicesRun(opts *devicesOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	c, err := f.Catalog()
	if err != nil {
		return err
	}
	list := c.Devices()
	return f.Output(form, nil, nil, list,
		func() []reports.Table { return []reports.Table{reports.DeviceList(list)} },
		func() []reports.Table { return reports.DeviceRecords(list) })
}

type devicesShowOptions struct {
	f       *factory
	name    string
	section sectionFlag
}

func newCmdDevicesShow(f *factory, runF func(*devicesShowOptions) error) *cobra.Command {
	opts := &devicesShowOptions{f: f}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show every figure of one GPU, with its source",
		Long: `Show every figure the catalog holds for one GPU, each with a key to the source
it comes from (listed under the table; JSON and CSV carry the full text), and
the occupancy limits of its compute capability. NAME is a catalog name or
alias, case-insensitive, or the name nvidia-smi prints. An architecture
(sm_90, 9.0) shows its occupancy limits alone.`,
		Example: `  gpucalc devices show h100
  gpucalc devices show "NVIDIA H100 80GB HBM3" --format json
  gpucalc devices show sm_89`,
		Args:              args(cobra.ExactArgs(1)),
		ValidArgsFunction: f.completeDevices,
		RunE: func(_ *cobra.Command, argv []string) error {
			opts.name = argv[0]
			return execute(opts, runF, devicesShowRun)
		},
	}
	f.addSectionFlag(cmd, &opts.section, nil, "figures", "limits", "carveouts", "sources")
	return cmd
}

func devicesShowRun(opts *devicesShowOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	d, err := f.Lookup(opts.name)
	if err != nil {
		// Not a device; an architecture shows its limits.
		if cc, ccErr := devices.ParseCC(opts.name); ccErr == nil {
			if _, archErr := devices.ArchFor(cc); archErr == nil {
				return showArch(f, form, &opts.section, cc)
			}
		}
		return err
	}
	v := reports.DeviceView{Device: d}
	var limits *devices.Arch
	if lim, err := d.Limits(); err == nil {
		limits = &lim
		av := reports.NewArchView(lim)
		v.Limits = &av
	}
	return f.Output(form, &opts.section, nil, v,
		func() []reports.Table {
			tables := reports.DeviceDetail(d)
			if limits != nil {
				tables = append(tables, reports.ArchLimits(*limits)...)
			}
			return tables
		},
		func() []reports.Table { return reports.DeviceFigureRecords(d, limits) })
}

type devicesArchsOptions struct {
	f       *factory
	cc      string
	section sectionFlag
}

func newCmdDevicesArchs(f *factory, runF func(*devicesArchsOptions) error) *cobra.Command {
	opts := &devicesArchsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "archs [CC]",
		Short: "List the occupancy limits of every compute capability",
		Long: `List the per-compute-capability limits that occupancy depends on: warps,
threads and blocks per SM, registers, shared memory (binary sizes, as CUDA
reports them). With CC (9.0, 90, sm_90, sm_100a), show that one in full:
allocation units, carveouts, barriers and cluster sizes too.`,
		Example: `  gpucalc devices archs
  gpucalc devices archs sm_90
  gpucalc devices archs 8.9 --format json`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(_ *cobra.Command, argv []string) error {
			if len(argv) == 1 {
				opts.cc = argv[0]
			}
			return execute(opts, runF, devicesArchsRun)
		},
	}
	f.addSectionFlag(cmd, &opts.section, nil, "limits", "carveouts", "sources")
	return cmd
}

func devicesArchsRun(opts *devicesArchsOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	if opts.cc != "" {
		cc, err := devices.ParseCC(opts.cc)
		if err != nil {
			return usageError{err}
		}
		return showArch(f, form, &opts.section, cc)
	}
	list := devices.Archs()
	views := make([]reports.ArchView, len(list))
	for i, a := range list {
		views[i] = reports.NewArchView(a)
	}
	return f.Output(form, &opts.section, nil, views,
		func() []reports.Table { return reports.ArchList(list) },
		func() []reports.Table { return reports.ArchRecords(list) })
}

// showArch prints the occupancy limits of one compute capability.
func showArch(f *factory, form reports.Format, sec *sectionFlag, cc devices.CC) error {
	lim, err := devices.ArchFor(cc)
	if err != nil {
		return usageError{err}
	}
	return f.Output(form, sec, nil, reports.NewArchView(lim),
		func() []reports.Table { return reports.ArchLimits(lim) },
		func() []reports.Table { return reports.ArchRecords([]devices.Arch{lim}) })
}
