package main

import (
	"strconv"

	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

func newCmdModelList(f *factory, runF func(*factory) error) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the built-in model configs and their sources",
		Example: `  gpucalc model list`,
		Args:    args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(f, runF, modelListRun)
		},
	}
}

func modelListRun(f *factory) error {
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	type entry struct {
		Name      string   `json:"name"`
		ID        string   `json:"hf_id"`
		Also      []string `json:"same_architecture"`
		ModelType string   `json:"model_type"`
		Params    int64    `json:"params"`
		Source    string   `json:"source"`
	}
	var list []entry
	var rows [][]string
	for _, b := range model.Builtins() {
		c, err := model.LoadBuiltin(b.Name)
		if err != nil {
			return err
		}
		p := c.Params().Total
		list = append(list, entry{b.Name, b.ID, append([]string{}, b.Also...), c.ModelType, p, b.Source})
		rows = append(rows, []string{b.Name, b.ID, c.ModelType, strconv.FormatInt(p, 10), b.Source})
	}
	table := func() []reports.Table { return []reports.Table{reports.ModelList(rows)} }
	return f.Output(form, nil, nil, list, table, table)
}
