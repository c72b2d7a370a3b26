package main

import (
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

func (a *app) newDevicesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the GPUs in the catalog",
		Long: `List the GPUs in the catalog with their headline figures. Peaks are dense
(no 2:4 sparsity); bandwidth is decimal (TB/s = 1e12 B/s). The ridge point is
the dense BF16 tensor peak divided by DRAM bandwidth, in FLOP per byte.`,
		Example: `  gpucalc devices
  gpucalc devices --format markdown
  gpucalc devices --device-file my-h100.yaml`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := a.outFormat(nil)
			if err != nil {
				return err
			}
			c, err := a.Catalog()
			if err != nil {
				return err
			}
			list := c.Devices()
			if f == reports.FormatJSON {
				return reports.JSON(a.stdout, list)
			}
			return reports.Render(a.stdout, f, reports.DeviceList(list))
		},
	}
	cmd.AddCommand(a.newDevicesShowCmd())
	return cmd
}

func (a *app) newDevicesShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show every figure of one GPU, with its source",
		Long: `Show every figure the catalog holds for one GPU, each with the source it comes
from, and the occupancy limits of its compute capability. NAME is a catalog
name or alias, case-insensitive, or the name nvidia-smi prints.`,
		Example: `  gpucalc devices show h100
  gpucalc devices show "NVIDIA H100 80GB HBM3" --format json`,
		Args:              args(cobra.ExactArgs(1)),
		ValidArgsFunction: a.completeDevices,
		RunE: func(cmd *cobra.Command, argv []string) error {
			f, err := a.outFormat(nil)
			if err != nil {
				return err
			}
			d, _, err := a.Device(argv[0])
			if err != nil {
				return err
			}
			lim, limErr := d.Limits()
			if f == reports.FormatJSON {
				out := struct {
					devices.Device
					Limits *devices.Arch `json:"limits,omitempty"`
				}{Device: d}
				if limErr == nil {
					out.Limits = &lim
				}
				return reports.JSON(a.stdout, out)
			}
			tables := []reports.Table{reports.DeviceDetail(d)}
			if limErr == nil {
				tables = append(tables, reports.ArchLimits(lim))
			}
			return reports.Render(a.stdout, f, tables...)
		},
	}
}
