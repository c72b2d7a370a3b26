package main

import (
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

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
