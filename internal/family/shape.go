package family

import (
	"context"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
)

// Shape is the layout of one column family's objects in the file (format
// 1, format 2, or a version-1 table part way through Upgrade) with the
// statements of that layout. A Family holds one for its writes and one for
// its reads (the same one, except while Upgrade changes the layout).
type Shape struct {
	// Objects names the objects and says their layout; the engine's writes
	// and scans below SQL take a pointer to it.
	Objects layout.Objects
	// SQL is the statements of the data path.
	SQL layout.Queries
	// GetPoint and ExistsPoint are the point reads below SQL of the Get and
	// Exists statements: the view column each of their columns reads.
	GetPoint, ExistsPoint engine.PointSpec
}

// NewShape returns the shape of column family name in the layout crc and
// v2 say.
func NewShape(name string, crc, v2 bool) *Shape {
	sh := &Shape{Objects: layout.For(name, crc, v2)}
	sh.SQL = sh.Objects.Queries()
	sh.GetPoint = engine.PointSpec{Objects: &sh.Objects, Value: true, Fields: []int{engine.ViewValue, engine.ViewExpiry}}
	sh.ExistsPoint = engine.PointSpec{Objects: &sh.Objects, Fields: []int{engine.ViewExpiry}}
	if crc {
		sh.GetPoint.Fields = []int{engine.ViewValue, engine.ViewExpiry, engine.ViewCrc, engine.ViewEcrc}
		sh.ExistsPoint.Fields = []int{engine.ViewExpiry, engine.ViewEcrc}
	}
	return sh
}

// ReadShape asks the file how column family name is laid out: whether its
// table has the checksum column, and whether it is in the format-2 (STRICT)
// form.
func ReadShape(ctx context.Context, c *engine.Conn, name string) (crc, v2 bool, err error) {
	rows, err := c.Query(ctx, `SELECT (SELECT count(*) FROM pragma_table_info(?1) WHERE name = 'crc'), (SELECT count(*) FROM pragma_table_list(?1) WHERE schema = 'main' AND strict = 1)`, name)
	if err != nil {
		return false, false, err
	}
	if rows.Next() {
		crc, v2 = rows.Int(0) > 0, rows.Int(1) > 0
	}
	return crc, v2 && crc, rows.Close()
}
