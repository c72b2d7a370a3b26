package escape

import (
	"encoding/xml"
	"strings"
	"testing"
)

// hostile are names an input can carry, one per class of attack.
var hostile = map[string]string{
	"clear screen":   "gemm\x1b[2J\x1b[H",
	"window title":   "k\x1b]0;pwned\x07",
	"osc 52":         "k\x1b]52;c;cm0gLXJmIH4=\x07",
	"carriage":       "real\rfake",
	"bell":           "k\a",
	"c1 csi":         "k\u009b2J",
	"bidi override":  "k\u202eexe.txt",
	"bidi isolate":   "k\u2066x\u2069",
	"invalid utf-8":  "k\xff\xfe",
	"newline":        "a\nb",
	"line separator": "a\u2028b",
	"nul":            "a\x00b",
}

func TestTerminal(t *testing.T) {
	for name, s := range hostile {
		got := Terminal(s)
		for _, r := range got {
			if unsafeRune(r) || r == '\uFFFD' {
				t.Errorf("%s: Terminal(%q) = %q keeps %U", name, s, got, r)
			}
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"gemm\x1b[2J", `gemm\x1b[2J`},
		{"k\x1b]52;c;QQ==\x07", `k\x1b]52;c;QQ==\a`},
		{"a\rb\nc\td", `a\rb\nc\td`},
		{"k\u009b", `k\u009b`},
		{"k\u202ex", `k\u202ex`},
		{"k\xff", `k\xff`},
		// What people write is left alone: units, glyphs, CJK, emoji.
		{"ampere_gemm_128x64 · 3.35 TB/s ≤ µs 日本 🚀", "ampere_gemm_128x64 · 3.35 TB/s ≤ µs 日本 🚀"},
	} {
		if got := Terminal(tc.in); got != tc.want {
			t.Errorf("Terminal(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a|b", `a\|b`},
		{`a\|b`, `a\\\|b`},
		{"a\nb\r\nc", "a<br>b<br>c"},
		{"<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"},
		{"a&amp;b", "a&amp;amp;b"},
		{"k\x1b[2J", `k\x1b[2J`},
		{"void gemm<float, 128>(float*)", "void gemm&lt;float, 128&gt;(float*)"},
	} {
		if got := Markdown(tc.in); got != tc.want {
			t.Errorf("Markdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCSV(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3+cmd", "'-2+3+cmd"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", `\t=1`},
		{"\r=1", `\r=1`},
		{"=1\x1b]52;c;QQ==\a", `'=1\x1b]52;c;QQ==\a`},
		// Numbers stay numbers.
		{"-1.5", "-1.5"},
		{"+3e9", "+3e9"},
		{"-0", "-0"},
		{"gemm", "gemm"},
		{"", ""},
		{"a=b", "a=b"},
	} {
		if got := CSV(tc.in); got != tc.want {
			t.Errorf("CSV(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestXML(t *testing.T) {
	for name, s := range hostile {
		doc := "<text>" + xmlEscape(XML(s)) + "</text>"
		if err := xml.Unmarshal([]byte(doc), new(string)); err != nil {
			t.Errorf("%s: %q is not well-formed XML: %v", name, doc, err)
		}
	}
	if got := XML("a<b & \"c\" \u00e9\t"); got != "a<b & \"c\" \u00e9\t" {
		t.Errorf("XML changed characters XML holds: %q", got)
	}
}

// xmlEscape escapes markup as the writers XML's output goes to do (gonum's
// SVG backend uses html.EscapeString).
func xmlEscape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s)
}

func FuzzTerminal(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range Terminal(s) {
			if unsafeRune(r) {
				t.Fatalf("Terminal(%q) keeps %U", s, r)
			}
		}
		if err := xml.Unmarshal([]byte("<t>"+xmlEscape(XML(s))+"</t>"), new(string)); err != nil {
			t.Fatalf("XML(%q): %v", s, err)
		}
	})
}
