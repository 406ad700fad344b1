package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	ucli "github.com/urfave/cli/v2"

	"hearth/store"
)

func (a *app) backupCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "backup",
		Usage:     "write a consistent copy of the database to FILE (safe while the server runs)",
		ArgsUsage: "FILE",
		Description: "Copies $DATA_DIR/hearth.db with SQLite's VACUUM INTO on a connection of its own: the\n" +
			"copy is the whole database as of one moment, even while the server keeps writing.\n" +
			"FILE must not exist. File contents are in the database, so this is the whole backup\n" +
			"(keep DATA_DIR/secret_key too, or sessions and API keys signed with it stop working).",
		Flags:  []ucli.Flag{dataDirFlag()},
		Action: a.backup,
	}
}

func (a *app) backup(c *ucli.Context) error {
	if c.NArg() != 1 {
		return usageError(c, "backup takes exactly one argument, the file to write")
	}
	dst := c.Args().First()
	dir, _ := a.dataDir(c)
	src, err := existingDB(dir)
	if err != nil {
		return err
	}
	// Claim the name first (VACUUM INTO accepts an empty file): no race with
	// another writer of dst, and the copy, which holds password hashes, is 0600.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return ucli.Exit(fmt.Sprintf("%s already exists; refusing to overwrite it", dst), 1)
	} else if err != nil {
		return err
	}
	f.Close()
	start := time.Now()
	if err := store.Backup(c.Context, src, dst); err != nil {
		removeDB(dst)
		return err
	}
	fi, err := os.Stat(dst)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "backup of %s written to %s (%d bytes, %s)\n", src, dst, fi.Size(),
		time.Since(start).Round(time.Millisecond))
	return nil
}

func (a *app) restoreCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "restore",
		Usage:     "replace the database with FILE (stop the server first)",
		ArgsUsage: "FILE",
		Description: "Run it while the server is STOPPED: a running server keeps the old database open.\n" +
			"FILE must be a Hearth database (a `hearth backup`) whose schema this binary knows.\n" +
			"The current hearth.db is kept as hearth.db.bak-<unix time>. Migrations, if FILE is\n" +
			"older, are applied at the next start.",
		Flags:  []ucli.Flag{dataDirFlag()},
		Action: a.restore,
	}
}

// sqliteHeader starts every SQLite 3 database file.
var sqliteHeader = []byte("SQLite format 3\x00")

func (a *app) restore(c *ucli.Context) error {
	if c.NArg() != 1 {
		return usageError(c, "restore takes exactly one argument, the backup file")
	}
	ctx := c.Context
	src := c.Args().First()
	if err := checkSQLiteHeader(src); err != nil {
		return ucli.Exit(err.Error(), 1)
	}
	dir, _ := a.dataDir(c)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	dbPath := filepath.Join(dir, dbFile)
	stamp := strconv.FormatInt(time.Now().Unix(), 10)

	// Check a private copy, so the user's file is never opened read-write.
	tmp := dbPath + ".restore-" + stamp
	if err := copyFile(src, tmp); err != nil {
		return err
	}
	defer removeDB(tmp) // no-op once it has been renamed into place
	v, err := store.SchemaVersionOf(ctx, tmp)
	switch {
	case err != nil:
		return ucli.Exit(fmt.Sprintf("%s is not a readable SQLite database: %v", src, err), 1)
	case v == 0:
		return ucli.Exit(fmt.Sprintf("%s is not a Hearth database (it has no applied migrations)", src), 1)
	case v > store.LatestMigration():
		return ucli.Exit(fmt.Sprintf("%s has schema version %d, newer than this binary's %d: restore it with a newer Hearth",
			src, v, store.LatestMigration()), 1)
	}
	// SQLite checkpointed and closed it; an empty -wal or a -shm may remain.
	removeSidecars(tmp)

	bak := ""
	if _, err := os.Stat(dbPath); err == nil {
		bak = dbPath + ".bak-" + stamp
		if err := os.Rename(dbPath, bak); err != nil {
			return err
		}
		// A WAL left by a crash belongs to the old file: keep the pair
		// together under the new name (SQLite finds it as <name>-wal).
		if err := os.Rename(dbPath+"-wal", bak+"-wal"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		os.Remove(dbPath + "-shm")
	} else if errors.Is(err, os.ErrNotExist) {
		removeSidecars(dbPath) // stale: SQLite would replay them into the new file
	} else {
		return err
	}
	if err := os.Rename(tmp, dbPath); err != nil {
		return err
	}
	syncDir(dir)
	fmt.Fprintf(a.stdout, "restored %s (schema version %d) into %s\n", src, v, dbPath)
	if bak != "" {
		fmt.Fprintf(a.stdout, "the previous database is kept as %s\n", bak)
	}
	return nil
}

func checkSQLiteHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, sqliteHeader) {
		return fmt.Errorf("%s is not a SQLite database", path)
	}
	return nil
}

// copyFile copies src to a new file dst (0600) and syncs it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := errors.Join(out.Sync(), out.Close()); err != nil {
		os.Remove(dst)
		return err
	}
	return nil
}

// removeSidecars deletes the -wal and -shm files SQLite may leave beside a
// database.
func removeSidecars(path string) {
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
}

func removeDB(path string) {
	os.Remove(path)
	removeSidecars(path)
}

// syncDir makes the renames durable; best effort (not every OS allows it).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
