package main

import (
	"runtime"
	"runtime/debug"

	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

type versionOptions struct {
	f *factory
}

func newCmdVersion(f *factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{f: f}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the module version and the VCS revision gpucalc was built from",
		Long: `Print what this binary was built from: the module version (a release tag for
'go install github.com/gpucalc/gpucalc/cmd/gpucalc@VERSION', a pseudo-version
naming the commit for 'go install ./cmd/gpucalc' in a clone), the VCS
revision and its time, whether the tree had uncommitted changes, and the Go
version. 'gpucalc --version' prints the same on one line.`,
		Example: `  gpucalc version
  gpucalc --version
  gpucalc version --format json`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *versionOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	v := buildVersion(debug.ReadBuildInfo())
	return f.Output(form, nil, nil, v,
		func() []reports.Table { return reports.VersionTables(v) },
		func() []reports.Table { return reports.VersionRecords(v) })
}

// buildVersion reads the module version and the VCS settings Go records in
// the binary (go build and go install stamp them; go test and go run may
// not).
func buildVersion(bi *debug.BuildInfo, ok bool) reports.Version {
	v := reports.Version{Module: "(devel)", Go: runtime.Version()}
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Module = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}
