package ops

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/rows"
	"go.yaml.in/yaml/v3"
)

// Workload is a named list of ops, such as one transformer layer.
type Workload struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Entries     []Entry `json:"ops"`

	WorkloadDesign // optional fields for design review (design.go)
}

// Entry is one op of a workload: a name, the op, and how many times it runs.
type Entry struct {
	Name  string `json:"name"`
	Op    Op     `json:"op"`
	Count int    `json:"count"`

	EntryDesign // optional fields for design review (design.go)
}

// WorkloadSchema documents the workload file, for --help and the README.
const WorkloadSchema = `A workload file is YAML with these fields (unknown fields are errors):
  name: Llama-3-8B decoder layer, prefill   # required
  description: free text                    # optional
  dtype: bf16                               # optional default for ops that give none
  ops:                                      # required, one or more
    - name: q_proj                          # required, unique
      op: linear tokens=4096 in=4096 out=4096   # an op spec
      count: 1                              # optional, times the op runs (default 1)`

type workloadFile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	DType       string `yaml:"dtype"`
	Ops         []struct {
		Name  string `yaml:"name"`
		Op    string `yaml:"op"`
		Count *int   `yaml:"count"`

		entryDesignFile `yaml:",inline"` // design.go

	} `yaml:"ops"`

	workloadDesignFile `yaml:",inline"` // design.go
}

// MaxWorkloadBytes is the largest workload file read, and MaxOps the most
// ops it may list: far above a real one (a transformer layer is a few KiB
// and a dozen ops), small enough to parse and price in bounded memory.
const (
	MaxWorkloadBytes = 1 << 20
	MaxOps           = 10000
)

// ReadWorkload reads a workload file (at most MaxWorkloadBytes) from r and
// parses it; file names it in errors.
func ReadWorkload(file string, r io.Reader) (Workload, error) {
	data, err := rows.ReadAll(r, MaxWorkloadBytes)
	if err != nil {
		return Workload{}, fmt.Errorf("%s: %w", file, err)
	}
	return ParseWorkload(file, data)
}

// ParseWorkload reads a workload YAML file (file names it in errors); see
// WorkloadSchema. Parsing is strict: unknown fields, duplicate names and bad
// specs are errors.
func ParseWorkload(file string, data []byte) (Workload, error) {
	var f workloadFile
	if err := wholeNumbers(data); err != nil {
		return Workload{}, fmt.Errorf("%s: %w", file, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Workload{}, fmt.Errorf("%s: empty workload file", file)
		}
		return Workload{}, fmt.Errorf("%s: %s", file, yamlError(err))
	}
	var extra any
	if err := dec.Decode(&extra); err == nil || !errors.Is(err, io.EOF) {
		return Workload{}, fmt.Errorf("%s: one YAML document expected", file)
	}
	if strings.TrimSpace(f.Name) == "" {
		return Workload{}, fmt.Errorf("%s: missing name", file)
	}
	if len(f.Ops) == 0 {
		return Workload{}, fmt.Errorf("%s: no ops; give a list under \"ops\"", file)
	}
	if len(f.Ops) > MaxOps {
		return Workload{}, fmt.Errorf("%s: %d ops; a workload lists at most %d (use count: for repeats)", file, len(f.Ops), MaxOps)
	}
	dt := DefaultDType
	if f.DType != "" {
		var err error
		if dt, err = devices.ParseDType(f.DType); err != nil {
			return Workload{}, fmt.Errorf("%s: dtype: %w", file, err)
		}
	}
	w := Workload{Name: f.Name, Description: f.Description}
	seen := map[string]bool{}
	for i, e := range f.Ops {
		if strings.TrimSpace(e.Name) == "" {
			return Workload{}, fmt.Errorf("%s: ops[%d]: missing name", file, i)
		}
		if seen[e.Name] {
			return Workload{}, fmt.Errorf("%s: ops[%d]: name %q used twice", file, i, e.Name)
		}
		seen[e.Name] = true
		op, err := parse(e.Op, dt)
		if err != nil {
			return Workload{}, fmt.Errorf("%s: ops[%d] (%s): %w", file, i, e.Name, err)
		}
		n := 1
		if e.Count != nil {
			n = *e.Count
		}
		if n < 1 || n > 1<<20 {
			return Workload{}, fmt.Errorf("%s: ops[%d] (%s): count %d must be between 1 and 1048576", file, i, e.Name, n)
		}
		w.Entries = append(w.Entries, Entry{Name: e.Name, Op: op, Count: n})
	}
	if err := f.design(file, &w); err != nil {
		return Workload{}, err
	}
	return w, nil
}

// wholeFields are the workload file's fields that hold whole numbers.
var wholeFields = map[string]bool{"count": true, "threads": true, "regs": true, "spill_bytes": true,
	"elem_bytes": true, "stride": true, "offset": true, "ilp": true}

// wholeNumbers refuses a number with a fraction or exponent (2.5, 1e3, .nan)
// in a field that counts, which the YAML decoder would truncate.
func wholeNumbers(data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil // the decoder reports it
	}
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if wholeFields[k.Value] && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!float" {
					return fmt.Errorf("line %d: %s %s is not a whole number", v.Line, k.Value, rows.Quote(v.Value))
				}
			}
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(&doc)
}

// yamlKinds says in words what a YAML tag holds.
var yamlKinds = map[string]string{"!!int": "a whole number", "!!float": "a number", "!!str": "text", "!!bool": "true or false",
	"!!seq": "a list", "!!map": "a mapping (key: value lines)", "!!null": "nothing", "!!timestamp": "a date"}

// goKind says in words what a Go type named in a decoder message holds.
func goKind(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map[") || strings.HasPrefix(t, "struct") || strings.Contains(t, "."):
		return "a mapping (key: value lines)"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	}
	return "text"
}

// yamlError rewrites the YAML decoder's errors into one line without Go
// type names: "line 3: unknown field "repeat" (an op takes name, op, count)".
func yamlError(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	var msgs []string
	for _, e := range te.Errors {
		if i := strings.Index(e, "field "); i >= 0 && strings.Contains(e, " not found in type ") {
			field := strings.TrimPrefix(e[i:], "field ")
			field = field[:strings.Index(field, " not found")]
			where := "the file takes name, description, dtype, ops"
			if strings.Contains(e, `yaml:\"count\"`) {
				where = "an op takes name, op, count"
			}
			e = fmt.Sprintf("%sunknown field %q (%s)", e[:i], field, where)
		} else if i := strings.Index(e, "cannot unmarshal "); i >= 0 && strings.Contains(e, " into ") {
			// "cannot unmarshal !!int `5` into []struct { ... }"
			what, into, _ := strings.Cut(e[i+len("cannot unmarshal "):], " into ")
			tag, val, _ := strings.Cut(what, " ")
			got := yamlKinds[tag]
			if got == "" {
				got = "a value"
			}
			if val != "" {
				got += " " + rows.Quote(strings.Trim(val, "`"))
			}
			e = fmt.Sprintf("%sfound %s where %s belongs", e[:i], got, goKind(into))
		}
		msgs = append(msgs, e)
	}
	return strings.Join(msgs, "; ")
}
