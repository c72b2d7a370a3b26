package main

import "github.com/spf13/cobra"

// newCmdDevicesList is 'gpucalc devices list', the catalog as 'gpucalc
// devices' lists it: the name people try, as 'gpucalc model list'.
func newCmdDevicesList(f *factory, runF func(*devicesOptions) error) *cobra.Command {
	opts := &devicesOptions{f: f}
	return &cobra.Command{
		Use:   "list",
		Short: "List the GPUs in the catalog (as 'gpucalc devices')",
		Example: `  gpucalc devices list
  gpucalc devices list --format csv`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, devicesRun)
		},
	}
}
