// Package examples holds the example workloads of the documentation, embedded
// so that the web calculator can offer them.
package examples

import "embed"

// FS holds every example workload (*.yaml).
//
//go:embed *.yaml
var FS embed.FS
