// Package cli is Hearth's command line: serve, migrate, version, user
// (create, list, reset-password, set-role), backup, restore and config
// explain, built on urfave/cli/v2. main.go only builds the app (New) and runs
// it; everything the process wires together at start-up lives here.
//
// It may import every internal package (it is the composition root, with
// main). Nothing imports it except main.
//
// Invariants:
//   - no package-level mutable state: the environment, output streams,
//     version and bcrypt cost come in through Options, so tests run the real
//     commands through App.RunContext with their own environment;
//   - no command calls os.Exit: errors are returned (an ExitCoder carries the
//     exit code, see ExitCode) and main exits once;
//   - operator commands (user ...) act directly on $DATA_DIR/hearth.db as an
//     admin; they are the console of the machine, not an API client;
//   - `config explain` never writes: it reads a database only when its schema
//     is current and hands config a store whose SaveConfig does nothing;
//   - restore never overwrites: the previous database is renamed to
//     hearth.db.bak-<unix time> and the new file is checked (SQLite header,
//     Hearth schema, not newer than this binary) before it is moved in.
package cli
