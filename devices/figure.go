package devices

import (
	"fmt"
	"math"
)

// sourced is a number of a per-architecture data file (efficiency.yaml,
// latency.yaml), written {value: ..., source: KEY} where KEY names an entry
// of the file's sources.
type sourced struct {
	Value  string `yaml:"value"`
	Source string `yaml:"source"`
}

// figure is a sourced number resolved: its value and its source text.
type figure struct {
	v   float64
	src string
}

// resolve parses the value with parse and looks its source up in sources;
// what names the field in errors. Negative values are refused; callers that
// need a positive one check for zero.
func (s sourced) resolve(what string, sources map[string]string, parse func(string) (float64, error)) (figure, error) {
	src, ok := sources[s.Source]
	if !ok {
		return figure{}, fmt.Errorf("%s: source %q is not in the file's sources", what, s.Source)
	}
	v, err := parse(s.Value)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return figure{}, fmt.Errorf("%s: %q is not a non-negative number", what, s.Value)
	}
	return figure{v, src}, nil
}
