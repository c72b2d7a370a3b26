package reports

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/occupancy"
)

// A long list's entries of a type written here are appended as
// encoding/json with SetIndent(prefix, "  ") and SetEscapeHTML(false)
// writes them, byte for byte (TestNCUJSONAsEncodingJSON), without its
// reflection and second pass to indent: most of a million-kernel export's
// JSON time. Anything the appender does not write as encoding/json would
// (a NaN or an infinity, which encoding/json refuses) reports false, and
// the entry is left to encoding/json.

// appendEntry appends v at depth 2 of jsonList's output (prefix "    "),
// reporting false, with b as it was, where v is not of a type written
// here or holds a value encoding/json refuses.
func appendEntry(b []byte, v any) ([]byte, bool) {
	a, ok := v.(*ncu.Analysis)
	if !ok {
		return b, false
	}
	w := jsonWriter{b: b, ind: append(make([]byte, 0, 32), "\n    "...)}
	w.analysis(a)
	if w.bad {
		return b, false
	}
	return w.b, true
}

// jsonWriter appends indented JSON; ind is the newline and indent of the
// current depth, first whether the object or list open has no item yet.
type jsonWriter struct {
	b     []byte
	ind   []byte
	first bool
	bad   bool
}

func (w *jsonWriter) open(c byte) {
	w.b = append(w.b, c)
	w.ind = append(w.ind, "  "...)
	w.first = true
}

// close ends an object or list; an empty one is written "{}" or "[]".
func (w *jsonWriter) close(c byte) {
	w.ind = w.ind[:len(w.ind)-2]
	if !w.first {
		w.b = append(w.b, w.ind...)
	}
	w.b = append(w.b, c)
	w.first = false
}

// item starts a list's item.
func (w *jsonWriter) item() {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, w.ind...)
	w.first = false
}

// key starts an object's field (k needs no escaping).
func (w *jsonWriter) key(k string) {
	w.item()
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':', ' ')
}

func (w *jsonWriter) str(k, v string) {
	w.key(k)
	w.b = appendJSONString(w.b, v)
}

func (w *jsonWriter) int(k string, v int) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, int64(v), 10)
}

func (w *jsonWriter) float(k string, v float64) {
	w.key(k)
	w.b = w.appendFloat(w.b, v)
}

// floatOmit writes a field tagged omitempty: nothing for 0.
func (w *jsonWriter) floatOmit(k string, v float64) {
	if v != 0 {
		w.float(k, v)
	}
}

// appendFloat writes v as encoding/json does: 'f' form, or 'e' for very
// small or large magnitudes with a one-digit exponent unpadded; NaN and
// infinities mark the entry bad.
func (w *jsonWriter) appendFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w.bad = true
		return b
	}
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// strings writes a list of strings; nil as null.
func (w *jsonWriter) strings(k string, v []string) {
	list(w, k, v, func(s string) { w.b = appendJSONString(w.b, s) })
}

// ints writes a list of counts, Unlimited as null where nullUnlimited.
func (w *jsonWriter) ints(k string, v []int, nullUnlimited bool) {
	w.key(k)
	w.open('[')
	for _, n := range v {
		w.item()
		if nullUnlimited && n == occupancy.Unlimited {
			w.b = append(w.b, "null"...)
		} else {
			w.b = strconv.AppendInt(w.b, int64(n), 10)
		}
	}
	w.close(']')
}

func (w *jsonWriter) dim3(k string, d ncu.Dim3) {
	w.key(k)
	w.open('{')
	w.int("x", d.X)
	w.int("y", d.Y)
	w.int("z", d.Z)
	w.close('}')
}

// analysis writes an ncu.Analysis: the Kernel's fields, then its own.
func (w *jsonWriter) analysis(a *ncu.Analysis) {
	w.open('{')
	w.int("id", a.ID)
	w.str("name", a.Name)
	w.str("full_name", a.FullName)
	w.str("device", a.Device)
	w.str("compute_capability", a.CC.String())
	w.dim3("block", a.Block)
	w.dim3("grid", a.Grid)
	w.float("duration_seconds", a.Duration)
	if l := a.Launch; l != nil {
		w.key("launch")
		w.open('{')
		w.int("registers_per_thread", l.RegistersPerThread)
		w.int("static_smem_bytes", l.StaticSmem)
		w.int("dynamic_smem_bytes", l.DynamicSmem)
		w.int("smem_config_bytes", l.SmemConfig)
		if l.ClusterSize != 0 {
			w.int("cluster_size", l.ClusterSize)
		}
		w.int("barriers", l.Barriers)
		w.close('}')
	}
	objects(w, "work", a.Work, w.work)
	objects(w, "traffic", a.Traffic, w.traffic)
	o := a.Kernel.Occupancy
	w.key("ncu_occupancy")
	w.open('{')
	if o.Theoretical != nil {
		w.float("theoretical_pct", *o.Theoretical)
	}
	if o.Achieved != nil {
		w.float("achieved_pct", *o.Achieved)
	}
	w.int("blocks_per_sm", o.BlocksPerSM)
	w.str("limiters", o.Limiters.String())
	w.ints("blocks_by_limit", o.By[:], false)
	w.close('}')
	if len(a.Missing) > 0 {
		w.strings("missing", a.Missing)
	}
	if len(a.Implausible) > 0 {
		w.strings("implausible", a.Implausible)
	}
	w.float("total_flops", a.FLOPs)
	objects(w, "compute", a.Compute, func(r ncu.Rate) {
		w.work(r.Work)
		w.float("flops_per_second", r.PerSecond)
		w.floatOmit("peak_flops_per_second", r.Peak)
		w.floatOmit("share_of_peak", r.Share)
	})
	objects(w, "memory", a.Memory, func(l ncu.LevelRate) {
		w.traffic(l.Traffic)
		w.float("bytes_per_second", l.PerSecond)
		w.float("flops_per_byte", l.Intensity)
		w.floatOmit("ceiling_bytes_per_second", l.Ceiling)
		w.floatOmit("share_of_ceiling", l.Share)
	})
	w.str("bound", a.Bound)
	w.float("bound_share", a.BoundShare)
	occ := a.Occupancy
	w.key("occupancy")
	w.open('{')
	w.float("theoretical_pct", occ.Theoretical)
	w.int("blocks_per_sm", occ.BlocksPerSM)
	w.str("limiters", occ.Limiters.String())
	w.ints("blocks_by_limit", occ.By[:], true)
	if occ.Error != "" {
		w.str("error", occ.Error)
	}
	w.key("match")
	w.b = strconv.AppendBool(w.b, occ.Match)
	w.close('}')
	w.close('}')
}

// list writes a list, each entry written by one; nil as null.
func list[T any](w *jsonWriter, k string, v []T, one func(T)) {
	w.key(k)
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.open('[')
	for _, x := range v {
		w.item()
		one(x)
	}
	w.close(']')
}

// objects writes a list of objects, each one's fields written by one.
func objects[T any](w *jsonWriter, k string, v []T, one func(T)) {
	list(w, k, v, func(x T) {
		w.open('{')
		one(x)
		w.close('}')
	})
}

func (w *jsonWriter) work(x ncu.Work) {
	w.str("dtype", string(x.DType))
	w.str("path", string(x.Path))
	w.float("flops", x.FLOPs)
}

func (w *jsonWriter) traffic(x ncu.Traffic) {
	w.str("level", string(x.Level))
	w.float("bytes", x.Bytes)
}

// appendJSONString appends s quoted as encoding/json writes it without
// HTML escaping: '"', '\\' and control characters escaped, invalid UTF-8
// as U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	from := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[from:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			from = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[from:i]...)
			b = append(b, `\ufffd`...)
			i += size
			from = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[from:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			from = i
			continue
		}
		i += size
	}
	b = append(b, s[from:]...)
	return append(b, '"')
}
