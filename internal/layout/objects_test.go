package layout_test

import (
	"testing"

	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
)

func TestFor(t *testing.T) {
	o := layout.For("sessions", true, true)
	require.Equal(t, "sessions", o.Data)
	require.Equal(t, `"sessions"`, o.Quoted.Data)
	require.Equal(t, "__snkv_ttl_k__sessions", o.Keys)
	require.Equal(t, "__snkv_ttl_e__sessions", o.Expiry)
	require.Equal(t, `"__snkv_ttl_k__sessions"`, o.Quoted.Keys)
	require.Equal(t, `"__snkv_ttl_e__sessions"`, o.Quoted.Expiry)
	require.Equal(t, `"__snkv_view__sessions"`, o.Quoted.View)
	require.Equal(t, "__snkv_crc__sessions", o.CrcTrigger)
	require.Equal(t, [3]string{"__snkv_ttl_ti__sessions", "__snkv_ttl_tu__sessions", "__snkv_ttl_td__sessions"}, o.TTLTriggers)
	require.Equal(t, `"__snkv_ttl_tu__sessions"`, o.Quoted.TTLTriggers[layout.OnUpdate])
	require.True(t, o.Crc)
	require.True(t, o.V2)

	// Names with quotes are quoted safely.
	q := layout.For(`a"b`, false, false)
	require.Equal(t, `"a""b"`, q.Quoted.Data)
	require.Equal(t, `"__snkv_ttl_k__a""b"`, q.Quoted.Keys)
	require.Equal(t, `a"b`, q.Data)
}

func TestHiddenNames(t *testing.T) {
	name := layout.HiddenTableName("timelog", "cpu")
	require.Equal(t, "__snkv_timelog:cpu", name)
	require.True(t, layout.IsHidden(name))
	require.False(t, layout.IsHidden("users"))
	require.Equal(t, "sealed:__snkv_timelog:cpu", layout.SealedMarker(name))
}

// Every scan statement reads the view in key order, bounded as asked.
func TestScanStatements(t *testing.T) {
	o := layout.For("t", true, true)
	q := o.Queries()
	require.Equal(t, `SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__t" ORDER BY key`, q.Scan(layout.Open, layout.Open, false))
	require.Equal(t, `SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__t" WHERE key > ?1 AND key <= ?2 ORDER BY key DESC`,
		q.Scan(layout.Exclusive, layout.Inclusive, true))
	require.Equal(t, `SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__t" WHERE key < ?2 ORDER BY key`,
		q.Scan(layout.Open, layout.Exclusive, false))
}
