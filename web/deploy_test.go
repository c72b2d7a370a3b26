package web

import (
	"strings"
	"testing"
)

// The deploy form maps onto the SLA search: its field errors name the
// form's fields, and an answer carries the ranked tables, the Pareto chart
// and the command line that reproduces it.
func TestDeployAPI(t *testing.T) {
	h := newTestServer(t, true)
	for _, tc := range []struct{ query, field, want string }{
		{"devices=h100&ttft=2&tpot=50ms", "ttft", "unit"},
		{"devices=h100&isl=x", "isl", "not a whole number"},
		{"devices=h100&engine=tgi", "engine", "unknown engine"},
		{"devices=h100&ttft=&tpot=", "ttft", "give --ttft, --tpot or both"},
		{"devices=", "devices", "pick one or more"},
	} {
		refuses(t, h, "/api/deploy?"+tc.query, tc.field, tc.want)
	}
	w := get(h, "localhost", "/api/deploy?model=llama-3.1-8b&devices=h100&ttft=1s&tpot=12ms&isl=512&osl=64&weights=")
	a := decode(t, w)
	if w.Code != 200 || len(a.Tables) != 2 || len(a.Charts) != 1 || a.CLI != "gpucalc deploy llama-3.1-8b --devices h100 --ttft 1000ms --tpot 12ms --isl 512 --osl 64" {
		t.Errorf("search: status %d, %d tables, %d charts, cli %q, errors %q", w.Code, len(a.Tables), len(a.Charts), a.CLI, a.Errors)
	}
	if len(a.Tables) > 0 && (len(a.Tables[0].Rows) == 0 || a.Tables[0].Rows[0][0] != "1") {
		t.Errorf("no ranked deployment: %v", a.Tables[0])
	}
	if w := get(h, "localhost", "/deploy"); w.Code != 200 || !strings.Contains(w.Body.String(), `data-api="/api/deploy"`) {
		t.Errorf("page: status %d", w.Code)
	}
}
