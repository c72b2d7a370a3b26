package main

import (
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

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
