package catalog

import (
	"context"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/rowcodec"
)

// Format identifiers written into every store file.
const (
	// ApplicationID is the value of PRAGMA application_id in an snkv file
	// ("snkv" in ASCII).
	ApplicationID = 0x736e6b76
	// FormatVersion is the newest format this library reads: format 2
	// with the TTL expiry copy (layout.CopyFormat). A file becomes format 3
	// in the transaction that first gives a column family its expiry copy,
	// so that a library that reads only format 2 (which would not know to
	// keep the copies true, nor to check them) refuses it with ErrVersion.
	// Version-1 files are read and written as they are until Upgrade
	// converts them.
	FormatVersion = layout.CopyFormat
	// BaseFormat is the format of a new store and of a store Upgrade
	// converted from version 1: format 2, until a column family uses TTL.
	BaseFormat = 2
)

var (
	catalog   = layout.Quote(layout.CatalogTable)
	metaTable = layout.Quote(layout.MetaTable)
)

// header is what the file's header and schema say about it.
type header struct {
	fresh   bool  // no snkv state yet: a new (or, with adopt, an adopted) file
	format  int   // snkv format version of an existing store
	objects int64 // schema objects in the file
	utf8    bool  // the text encoding is UTF-8
}

// readHeader reads the header and reports what the file is; it fails on a
// file that belongs to something else or cannot be a store. It writes
// nothing.
func readHeader(ctx context.Context, c *engine.Conn, adopt, readOnly bool) (header, error) {
	var h header
	app, err := c.QueryInt(ctx, "PRAGMA application_id")
	if err != nil {
		return h, err
	}
	ver, err := c.QueryInt(ctx, "PRAGMA user_version")
	if err != nil {
		return h, err
	}
	if h.objects, err = c.QueryInt(ctx, `SELECT count(*) FROM sqlite_schema`); err != nil {
		return h, err
	}
	hasCatalog, err := c.QueryInt(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '`+layout.CatalogTable+`'`)
	if err != nil {
		return h, err
	}
	enc, err := c.QueryText(ctx, "PRAGMA encoding")
	if err != nil {
		return h, err
	}
	h.utf8 = enc == "UTF-8"
	switch {
	case app == ApplicationID && hasCatalog == 0:
		return h, fmt.Errorf("%w: snkv header without a catalog table", engine.ErrCorrupt)
	case app == ApplicationID:
		if h.format, err = fileFormat(ctx, c, ver); err != nil {
			return h, err
		}
		if !h.utf8 && !readOnly {
			// Version-1 triggers pass keys through text operators, which
			// lose bytes in a UTF-16 file; such a store is opened
			// read-only only, to copy its data out.
			return h, fmt.Errorf("%w: the file's text encoding is %s; snkv writes only UTF-8 files (open it ReadOnly to copy the data out)", engine.ErrNotStore, enc)
		}
		return h, nil
	case app != 0:
		return h, fmt.Errorf("%w: application_id %#x belongs to another application", engine.ErrNotStore, app)
	case h.objects == 0:
		h.fresh = true
		return h, nil
	case !adopt:
		return h, fmt.Errorf("%w: it has %d schema objects and no snkv header (set Options.Adopt to add snkv's tables beside them)", engine.ErrNotStore, h.objects)
	case !h.utf8:
		return h, fmt.Errorf("%w: cannot adopt a file whose text encoding is %s (snkv needs UTF-8)", engine.ErrNotStore, enc)
	}
	// Adopting: refuse before anything is written if a name snkv needs is
	// taken.
	clash, err := c.QueryText(ctx, `SELECT name FROM sqlite_schema WHERE name = '`+family.DefaultName+`' COLLATE NOCASE OR lower(name) LIKE '\_\_snkv\_%' ESCAPE '\' ORDER BY name LIMIT 1`)
	if err != nil {
		return h, err
	}
	if clash != "" {
		return h, fmt.Errorf("%w: cannot adopt the file: it already has an object named %q (%w)", engine.ErrNotStore, clash, engine.ErrExists)
	}
	h.fresh = true
	return h, nil
}

// readHeaderNow is readHeader in a read transaction of its own, so that
// the header fields and the schema it reads are one snapshot of the file.
// Outside a transaction each statement reads the file as it is at that
// statement: a store that another process creates meanwhile (its header
// and its tables are one commit) could be read as a file with tables but
// no snkv header, and refused.
func readHeaderNow(ctx context.Context, c *engine.Conn, adopt, readOnly bool) (header, error) {
	if err := c.Control(ctx, "BEGIN"); err != nil {
		return header{}, err
	}
	h, err := readHeader(ctx, c, adopt, readOnly)
	if err != nil {
		if c.Control(context.Background(), "ROLLBACK") != nil {
			c.MarkBroken()
		}
		return h, err
	}
	return h, c.Control(ctx, "COMMIT")
}

// fileFormat returns the format version of an snkv file: the meta table's
// when it has one, else 1 (a version-1 file keeps it in user_version).
func fileFormat(ctx context.Context, c *engine.Conn, userVersion int64) (int, error) {
	has, err := c.QueryInt(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '`+layout.MetaTable+`'`)
	if err != nil {
		return 0, err
	}
	v := int64(1)
	if has > 0 {
		if v, err = formatRow(ctx, c); err != nil {
			return 0, err
		}
	} else if userVersion > 1 {
		v = userVersion
	}
	if v < 1 || v > FormatVersion {
		return 0, fmt.Errorf("%w: file format %d is newer than this library, which reads 1 to %d", engine.ErrVersion, v, FormatVersion)
	}
	return int(v), nil
}

// formatRow reads the meta table's format row, which snkv always writes
// as an INTEGER: a missing row, or one of another SQL type (a tool that
// rewrote it, a flipped type bit), is a damaged header, ErrCorrupt.
func formatRow(ctx context.Context, c *engine.Conn) (int64, error) {
	rows, err := c.Query(ctx, `SELECT value FROM `+metaTable+` WHERE name = 'format'`)
	if err != nil {
		return 0, err
	}
	if !rows.Next() {
		if err := rows.Close(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: %s has no format row", engine.ErrCorrupt, layout.MetaTable)
	}
	k, v := rows.Kind(0), rows.Int(0)
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if k != engine.KindInt {
		return 0, fmt.Errorf("%w: the format row of %s is %s, not an INTEGER", engine.ErrCorrupt, layout.MetaTable, kindName(k))
	}
	return v, nil
}

// kindName names a storage class as SQL's typeof does, with its article
// ("an INTEGER", "a REAL", "TEXT", "a BLOB", "NULL").
func kindName(k int) string {
	switch name := rowcodec.KindName(k); k {
	case engine.KindInt:
		return "an " + name
	case engine.KindFloat, engine.KindBlob:
		return "a " + name
	default:
		return name
	}
}

// writeHeader makes a fresh file a format-2 store, inside the caller's
// transaction: the header, the catalog, the meta table and the default
// column family. An adopted file keeps its user_version (it is the other
// application's); snkv's version is in the meta table.
func writeHeader(ctx context.Context, c *engine.Conn, h header, nowMs int64) error {
	q := []string{fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)}
	if h.objects == 0 {
		q = append(q, fmt.Sprintf("PRAGMA user_version = %d", BaseFormat))
	}
	q = append(q, layout.CatalogSQL, layout.MetaSQL, fmt.Sprintf(`INSERT INTO "__snkv_meta" (name, value) VALUES ('format', %d)`, BaseFormat))
	for _, s := range q {
		if err := c.ExecScript(ctx, s); err != nil {
			return err
		}
	}
	_, err := createIn(ctx, c, family.DefaultName, nowMs)
	return err
}

// isReservedObject reports whether a schema object's name is one of snkv's
// hidden names.
func isReservedObject(name string) bool {
	return family.HasFoldedPrefix(name, layout.HiddenPrefix)
}
