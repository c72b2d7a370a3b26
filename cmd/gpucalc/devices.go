package main

import (
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
	cmd.AddCommand(newCmdDevicesList(f, nil), newCmdDevicesShow(f, nil), newCmdDevicesArchs(f, nil))
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
