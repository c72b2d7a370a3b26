package devices

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxFileBytes is the largest device file read: one GPU's figures and
// sources are a few KiB, and a YAML parser holds tens of times its input.
const MaxFileBytes = 1 << 20

// decodeFile decodes data strictly into a deviceFile; errors are one line,
// name the file and line, and never show Go types.
func decodeFile(file string, data []byte) (*deviceFile, *yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%s: empty device file", file)
		}
		return nil, nil, yamlError(file, err)
	}
	// An empty document (a trailing ---) is harmless; one with content is a
	// second device, which would otherwise be ignored.
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, yamlError(file, err)
		}
		if len(extra.Content) > 0 && extra.Content[0].ShortTag() != "!!null" {
			return nil, nil, fmt.Errorf("%s:%d: a second YAML document (after ---); a device file describes one device, so put each in a file of its own", file, extra.Line)
		}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s:%d: a device file is a mapping of fields (name: ..., sms: ..., ...)", file, doc.Line)
	}
	// Strictness (unknown fields, duplicate keys) belongs to the decoder,
	// not to yaml.Node.Decode: decode the bytes again into the schema.
	dec = yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f deviceFile
	if err := dec.Decode(&f); err != nil {
		return nil, nil, yamlError(file, err)
	}
	return &f, doc.Content[0], nil
}

var (
	yamlLine     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownField = regexp.MustCompile(`^field (.+) not found in type (\S+)$`)
	wrongKind    = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `.*`)? into (\\S+)")
	definedTwice = regexp.MustCompile(`^mapping key "(.*)" already defined at line (\d+)$`)
)

var yamlKinds = map[string]string{"seq": "a list", "map": "a mapping", "str": "text", "int": "a number",
	"float": "a number", "bool": "true/false", "null": "nothing", "binary": "binary data", "timestamp": "a date"}

// yamlError rewrites an error of the YAML decoder as one line naming the
// file and line, in the schema's words rather than Go's.
func yamlError(file string, err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Errorf("%s: not valid YAML: %s", file, strings.TrimPrefix(msg, "yaml: "))
	}
	line, what := m[1], m[2]
	if u := unknownField.FindStringSubmatch(what); u != nil {
		s, ok := sections[u[2]]
		if !ok {
			s = [2]string{"this mapping", ""}
		}
		return fmt.Errorf("%s:%s: unknown field %q in %s (known: %s)", file, line, u[1], s[0], s[1])
	}
	if u := definedTwice.FindStringSubmatch(what); u != nil {
		return fmt.Errorf("%s:%s: %q given twice (first at line %s)", file, line, u[1], u[2])
	}
	if u := wrongKind.FindStringSubmatch(what); u != nil {
		want := "a mapping"
		switch {
		case strings.HasPrefix(u[2], "[]"):
			want = "a list"
		case u[2] == "string":
			want = "text"
		}
		got := yamlKinds[u[1]]
		if got == "" {
			got = "a value of another kind"
		}
		return fmt.Errorf("%s:%s: %s where %s was expected", file, line, got, want)
	}
	if te != nil {
		// A decoding error of a kind not rewritten above: its text may
		// name Go types, so say only where.
		return fmt.Errorf("%s:%s: a value of the wrong kind for this field (docs/devices.md lists the schema)", file, line)
	}
	return fmt.Errorf("%s:%s: not valid YAML: %s", file, line, what)
}
