package trace

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The trace's structure as the scanner reads it: the top-level object,
// traceEvents one event at a time, and each event's fields by name (case
// folded, as PyTorch 1.8 wrote "external id"). A field of an unexpected
// kind is skipped and left zero, as encoding/json would; a time that is
// not a number spoils the event.

// kind names a JSON value by its first byte, for messages.
func kind(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// text reads a string value, one copy of each distinct one kept (names
// repeat over millions of events); another kind is skipped, "" returned.
func (s *scanner) text() (string, error) {
	c, err := s.space()
	if err != nil {
		return "", fail(err)
	}
	if c != '"' {
		return "", s.skip(false)
	}
	b, err := s.string()
	if err != nil {
		return "", err
	}
	if v, ok := s.names[string(b)]; ok {
		return v, nil
	}
	return s.names.get(string(b)), nil
}

// timeError is a timestamp or duration that is not a number: it spoils
// its event, which is refused with its line.
type timeError struct{ error }

// time reads a timestamp or duration: a number, or a timeError naming the
// field.
func (s *scanner) time(field string) (float64, error) {
	c, err := s.space()
	if err != nil {
		return 0, fail(err)
	}
	if c == '"' || c == '{' || c == '[' {
		if err := s.skip(false); err != nil {
			return 0, err
		}
		return 0, timeError{fmt.Errorf("%q is %s, not a number of microseconds", field, kind(c))}
	}
	if m, frac, ok := s.plain(); ok {
		return float64(m) / pow10[frac], nil
	}
	lit, err := s.literal()
	if err != nil {
		return 0, err
	}
	if lit[0] == 'n' { // null: absent
		return 0, nil
	}
	v, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return 0, timeError{fmt.Errorf("%q is %s %s, not a number of microseconds", field, kind(lit[0]), lit)}
	}
	return v, nil
}

// number reads a number; another kind is skipped, ok false.
func (s *scanner) number() (v []byte, ok bool, err error) {
	c, err := s.space()
	if err != nil {
		return nil, false, fail(err)
	}
	if c == '"' || c == '{' || c == '[' {
		return nil, false, s.skip(false)
	}
	lit, err := s.literal()
	return lit, err == nil && kind(lit[0]) == "number", err
}

// integer reads a whole number; anything else reads as 0.
func (s *scanner) integer() (int64, error) {
	n, _, err := s.count()
	return n, err
}

// count reads a whole number that may be absent: ok false for anything
// else.
func (s *scanner) count() (n int64, ok bool, err error) {
	if _, err := s.space(); err == nil {
		if m, frac, ok := s.plain(); ok {
			if frac == 0 {
				return int64(m), true, nil
			}
			return 0, false, nil // a fraction: not a whole number
		}
	}
	lit, ok, err := s.number()
	if !ok {
		return 0, false, err
	}
	n, perr := strconv.ParseInt(string(lit), 10, 64)
	return n, perr == nil, nil
}

// countTo reads a whole number that may be absent into *dst, nil for
// anything else.
func (s *scanner) countTo(dst **int64) error {
	n, ok, err := s.count()
	if ok {
		*dst = &n
	}
	return err
}

// dim3 reads a kernel's "grid" or "block": a list of whole numbers, of
// which the first three are kept (anything else in their place reads as
// 0); a dimension not given is 1.
func (s *scanner) dim3() ([3]int, error) {
	d := [3]int{1, 1, 1}
	i := 0
	_, err := list(s, func() (struct{}, error) {
		n, err := s.integer()
		if i < 3 {
			d[i] = int(n)
		}
		i++
		return struct{}{}, err
	})
	return d, err
}

// texts reads a list of strings ("Input type", "Concrete Inputs"); an
// element of another kind reads as "". Each distinct list is read once and
// shared by the ops that repeat it (up to maxShapes of them), as "Input
// Dims" are: nothing changes them.
func (s *scanner) texts() ([]string, error) {
	c, err := s.space()
	if err != nil {
		return nil, fail(err)
	}
	if c != '[' {
		return nil, s.skip(false)
	}
	if err := s.skip(true); err != nil {
		return nil, err
	}
	if l, ok := s.lists[string(s.raw)]; ok {
		return l, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(s.raw, &items); err != nil {
		return nil, s.syntax("%v", err)
	}
	l := make([]string, len(items))
	for i, it := range items {
		var v string
		if json.Unmarshal(it, &v) == nil {
			l[i] = s.names.get(v)
		}
	}
	if len(s.lists) < maxShapes {
		s.lists[string(s.raw)] = l
	}
	return l, nil
}

// list reads a list, each element with elem; another kind is skipped
// (nil).
func list[T any](s *scanner, elem func() (T, error)) ([]T, error) {
	c, err := s.space()
	if err != nil {
		return nil, fail(err)
	}
	if c != '[' {
		return nil, s.skip(false)
	}
	s.expect('[')
	out := []T{}
	for ok, err := s.first(']'); ok || err != nil; ok, err = s.more(']') {
		if err != nil {
			return nil, err
		}
		v, err := elem()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// fold lower-cases an ASCII key in place (a copy of the trace's bytes),
// eight bytes at a time: a byte of x is a capital where it is at least
// 'A', below '[' and ASCII, and then gains 0x20.
func fold(k []byte) []byte {
	i := 0
	for ; i+8 <= len(k); i += 8 {
		x := binary.LittleEndian.Uint64(k[i:])
		const ones, high = 0x0101010101010101, 0x8080808080808080
		low := x &^ high // each byte below 0x80: adding carries into no other
		capital := (low + (0x80-'A')*ones) &^ (low + (0x80-'[')*ones) &^ x & high
		binary.LittleEndian.PutUint64(k[i:], x|capital>>2)
	}
	for ; i < len(k); i++ {
		if c := k[i]; c >= 'A' && c <= 'Z' {
			k[i] = c + 'a' - 'A'
		}
	}
	return k
}

// fields reads an object, calling field for each key (lower-cased, valid
// until the next read); field reads the value.
func (s *scanner) fields(field func(key []byte) error) error {
	c, err := s.space()
	if err != nil {
		return fail(err)
	}
	if c != '{' {
		return s.skip(false)
	}
	s.expect('{')
	for ok, err := s.first('}'); ok || err != nil; ok, err = s.more('}') {
		if err != nil {
			return err
		}
		k, err := s.string()
		if err != nil {
			return err
		}
		key := fold(append(s.field[:0], k...)) // a copy: a reader ahead may read the same bytes
		s.field = key
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
	}
	return nil
}

// event reads one trace event.
func (s *scanner) event(e *event) error {
	c, err := s.space()
	if err != nil {
		return fail(err)
	}
	if c != '{' { // not an event: skipped, as another tool's would be
		return s.skip(false)
	}
	var timeErr error // a time that is not a number, said once the event is read
	err = s.fields(func(key []byte) error {
		var err error
		switch string(key) {
		case "ph":
			e.Ph, err = s.text()
		case "cat":
			e.Cat, err = s.text()
		case "name":
			e.Name, err = s.text()
		case "tid":
			e.Tid, err = s.id()
		case "ts":
			e.Ts, err = s.time("ts")
			timeErr, err = timeLater(timeErr, err)
		case "dur":
			e.Dur, err = s.time("dur")
			timeErr, err = timeLater(timeErr, err)
		case "args":
			err = s.fields(func(key []byte) error { return s.arg(&e.Args, key) })
		default:
			err = s.skip(false)
		}
		return err
	})
	if err != nil {
		return err
	}
	return timeErr
}

// timeLater sets a timeError aside, the first of an event's, to be said
// once the event is read; other errors stop at once. (errors.As is called
// only on an error: its target escapes, an allocation per time read.)
func timeLater(first, err error) (error, error) {
	if err == nil {
		return first, nil
	}
	if te := (timeError{}); errors.As(err, &te) {
		return cmp.Or(first, err), nil
	}
	return first, err
}

// id reads a pid or tid: a number (its text), or a string; either kept
// once (names).
func (s *scanner) id() (flexID, error) {
	c, err := s.space()
	if err != nil {
		return "", fail(err)
	}
	if c == '"' {
		t, err := s.text()
		return flexID(t), err
	}
	lit, ok, err := s.number()
	if !ok {
		return "", err
	}
	if v, ok := s.names[string(lit)]; ok {
		return flexID(v), nil
	}
	return flexID(s.names.get(string(lit))), nil
}

// intTo reads an integer into an int field.
func (s *scanner) intTo(dst *int) error {
	n, err := s.integer()
	*dst = int(n)
	return err
}

// arg reads one of an event's args.
func (s *scanner) arg(a *args, key []byte) error {
	var err error
	switch string(key) {
	case "external id":
		a.ExternalID, err = s.integer()
	case "correlation":
		a.Correlation, err = s.integer()
	case "bytes":
		a.Bytes, err = s.integer()
	case "registers per thread":
		err = s.intTo(&a.Registers)
	case "shared memory":
		err = s.intTo(&a.Smem)
	case "stream":
		err = s.intTo(&a.Stream)
	case "device":
		err = s.intTo(&a.Device)
	case "grid":
		a.Grid, err = s.dim3()
	case "block":
		a.Block, err = s.dim3()
	case "input type":
		a.Types, err = s.texts()
	case "concrete inputs":
		a.Concrete, err = s.texts()
	case "input dims":
		if err = s.skip(true); err == nil {
			a.Dims = s.dims(s.raw)
		}
	case "collective name":
		a.Collective, err = s.text()
	case "in msg nelems":
		err = s.countTo(&a.InElems)
	case "out msg nelems":
		err = s.countTo(&a.OutElems)
	case "dtype":
		a.DType, err = s.text()
	case "group size":
		err = s.intTo(&a.GroupSize)
	case "process group name":
		a.Group, err = s.id()
	case "est. achieved occupancy %":
		var lit []byte
		var ok bool
		if lit, ok, err = s.number(); ok {
			if v, perr := strconv.ParseFloat(string(lit), 64); perr == nil {
				a.Occupancy = s.estimate(v)
			}
		}
	default:
		err = s.skip(false)
	}
	return err
}

// estimate returns a pointer to v, shared by the kernels of that estimated
// occupancy (up to maxShapes values; nothing changes them): an allocation
// per kernel otherwise.
func (s *scanner) estimate(v float64) *float64 {
	bits := math.Float64bits(v) // -0 apart from 0
	if p, ok := s.estimates[bits]; ok {
		return p
	}
	p := &v
	if len(s.estimates) < maxShapes {
		s.estimates[bits] = p
	}
	return p
}

// dims parses "Input Dims" (nil when it is not a list of integer lists),
// once for each distinct text; ops share the result, which nothing
// changes.
func (s *scanner) dims(raw []byte) inputDims {
	if d, ok := s.shapes[string(raw)]; ok {
		return d
	}
	var d inputDims
	if d.UnmarshalJSON(raw) != nil {
		d = nil
	}
	if len(s.shapes) < maxShapes {
		s.shapes[string(raw)] = d
	}
	return d
}

// decode reads the top-level object. It returns a nil Trace when the input
// is not JSON at all.
func (s *scanner) decode() (*Trace, error) {
	c, err := s.space()
	if err != nil {
		return nil, fail(err)
	}
	switch c {
	case '{':
	case '[':
		return &Trace{}, fmt.Errorf("%w: a Chrome trace in array form, as other tools write; torch.profiler writes an object with traceEvents (prof.export_chrome_trace(\"trace.json\"))", ErrNotTorch)
	case '"':
		t, err := s.text()
		if err != nil {
			return nil, err
		}
		return &Trace{}, fmt.Errorf("a trace is a JSON object, found the string %s", strconv.Quote(t))
	default:
		lit, err := s.literal()
		if err != nil {
			return nil, err
		}
		return &Trace{}, fmt.Errorf("a trace is a JSON object, found %s", lit)
	}
	t := &Trace{}
	var b building // every traceEvents list's events, moved into t at the end
	defer b.done(t)
	sawEvents := false
	err = s.fields(func(key []byte) error {
		defer s.done()
		switch string(key) {
		case "traceevents":
			sawEvents = true
			return t.events(s, &b)
		case "deviceproperties":
			if err := s.skip(true); err != nil {
				return err
			}
			if err := json.Unmarshal(s.raw, &t.Devices); err != nil {
				return fmt.Errorf("deviceProperties: %w", err)
			}
		case "distributedinfo":
			// Kept only where it gives a rank; any other shape is skipped.
			if err := s.skip(true); err != nil {
				return err
			}
			var d struct {
				Backend   any  `json:"backend"`
				Rank      *int `json:"rank"`
				WorldSize int  `json:"world_size"`
			}
			var te *json.UnmarshalTypeError
			if err := json.Unmarshal(s.raw, &d); (err == nil || errors.As(err, &te)) && d.Rank != nil {
				backend, _ := d.Backend.(string)
				t.Distributed = &Distributed{Backend: backend, Rank: *d.Rank, WorldSize: d.WorldSize}
			}
		case "record_shapes":
			if err := s.skip(true); err != nil {
				return err
			}
			var v any
			json.Unmarshal(s.raw, &v)
			t.RecordShapes = v == true || v == 1.0 || v == "1" || v == "true"
		default:
			return s.skip(false)
		}
		return nil
	})
	if err != nil {
		return t, err
	}
	if !sawEvents {
		return t, fmt.Errorf("%w: no traceEvents", ErrNotTorch)
	}
	return t, nil
}

// events reads the traceEvents list one event at a time.
func (t *Trace) events(s *scanner, b *building) error {
	c, err := s.space()
	if err != nil {
		return fail(err)
	}
	if c != '[' {
		return fmt.Errorf("%w: traceEvents is not a list", ErrNotTorch)
	}
	s.expect('[')
	s.done()
	for ok, err := s.first(']'); ok || err != nil; ok, err = s.more(']') {
		if err != nil {
			return err
		}
		for s.adopt(t, b) {
		}
		e := event{Args: args{Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}}} // a dimension not given is 1
		if err := s.event(&e); err != nil {
			var syn *errSyntax
			switch {
			case errors.Is(err, errTruncated):
				return fmt.Errorf("the trace is truncated after %d complete events: was the export interrupted, or the file cut?", t.Events)
			case errors.As(err, &timeError{}):
				return fmt.Errorf("event %d (line %d): %w", t.Events+1, s.line, err)
			case errors.As(err, &syn):
				return fmt.Errorf("event %d: %w", t.Events+1, err)
			}
			return err // a limit, worded by Read
		}
		t.Events++
		if err := b.add(&e, s.lim.events); err != nil {
			return fmt.Errorf("event %d (line %d): %w", t.Events, s.line, err)
		}
		s.done()
	}
	return nil
}
