package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"unicode/utf8"

	ucli "github.com/urfave/cli/v2"

	"hearth/config"
	"hearth/store"
)

func (a *app) configCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "config",
		Usage: "inspect the configuration",
		Subcommands: []*ucli.Command{{
			Name:  "explain",
			Usage: "show every setting: value (secrets redacted), where it came from, and whether it is stored",
			Description: "Reads the environment and, when $DATA_DIR/hearth.db exists with a current schema, the\n" +
				"stored settings, exactly as `serve` would, but never writes anything.\n" +
				"SOURCE: env, database, default. STORED: persistent (the database value wins over env\n" +
				"after the first start), not stored (persistence is off, or no database yet), env-only.",
			Flags: []ucli.Flag{
				&ucli.BoolFlag{Name: "json", Usage: "print JSON (full values)"},
				dataDirFlag(),
			},
			Action: a.explain,
		}},
	}
}

// readOnlyConfig lets config.Load read stored settings without seeding them.
type readOnlyConfig struct{ st *store.Store }

func (r readOnlyConfig) LoadConfig(ctx context.Context) (map[string]json.RawMessage, error) {
	return r.st.LoadConfig(ctx)
}

func (readOnlyConfig) SaveConfig(context.Context, map[string]json.RawMessage) error { return nil }

type explainJSON struct {
	Name        string `json:"name"`
	Value       string `json:"value"`
	Source      string `json:"source"`
	Persistent  bool   `json:"persistent"`
	Stored      bool   `json:"stored"`
	Key         string `json:"key,omitempty"`
	Section     string `json:"section"`
	Description string `json:"description"`
}

func (a *app) explain(c *ucli.Context) error {
	ctx := c.Context
	dir, fromFlag := a.dataDir(c)
	over := map[string]string{}
	if fromFlag {
		over["DATA_DIR"] = dir
	}
	var cs config.Store // nil: environment and defaults only
	path := filepath.Join(dir, dbFile)
	if _, err := os.Stat(path); err == nil {
		// store.Open would migrate an older schema, which is a write: only
		// open a database that is exactly current.
		v, err := store.SchemaVersionOf(ctx, path)
		switch {
		case err != nil:
			return fmt.Errorf("read %s: %w", path, err)
		case v != store.LatestMigration():
			fmt.Fprintf(a.stderr, "note: %s is at schema version %d, this binary expects %d; stored settings are not shown (run `hearth migrate`)\n",
				path, v, store.LatestMigration())
		default:
			st, err := store.Open(ctx, path)
			if err != nil {
				return err
			}
			defer st.Close()
			cs = readOnlyConfig{st}
		}
	} else if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(a.stderr, "note: no database at %s; showing the environment and defaults\n", path)
	} else {
		return err
	}

	settings, warns, err := config.Load(ctx, a.configEnv(over), cs)
	if err != nil {
		return err
	}
	for _, w := range warns {
		fmt.Fprintf(a.stderr, "warning: %s\n", w)
	}
	if err := settings.Get().Validate(); err != nil {
		fmt.Fprintf(a.stderr, "warning: `hearth serve` would refuse to start: %v\n", err)
	}
	rows := settings.Explain()
	if c.Bool("json") {
		out := make([]explainJSON, 0, len(rows))
		for _, r := range rows {
			out = append(out, explainJSON{Name: r.Name, Value: r.Value, Source: string(r.Source),
				Persistent: r.Persistent, Stored: r.Stored, Key: r.Key, Section: string(r.Section),
				Description: r.Description})
		}
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tSOURCE\tSTORED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, tableValue(r.Value), r.Source, persistence(r))
	}
	return tw.Flush()
}

func persistence(r config.ExplainRow) string {
	switch {
	case !r.Persistent:
		return "env-only"
	case r.Stored:
		return "persistent"
	}
	return "not stored"
}

// tableValue keeps a row on one line and the table readable; --json has the
// full values.
func tableValue(v string) string {
	if v == "" {
		return `""`
	}
	v = oneLine(v)
	const maxRunes = 60
	if utf8.RuneCountInString(v) > maxRunes {
		return string([]rune(v)[:maxRunes-1]) + "…"
	}
	return v
}
