// Package family is a column family below its public handle: Family, the
// state every handle of one column family (or hidden table) shares (its
// name and creation stamp, its layout and statements, whether it has TTL
// tables, was dropped, is sealed); Env, what every column family of a store
// shares (the engine, the clock, the value limit, the encryption state);
// the limits and checks of names; the codec of a family's rows
// (Family.Codec: package rowcodec owns the row); and the TTL writes that
// the handles and the catalog's conversions both make.
//
// The public handle (columnfamily.ColumnFamily) holds a *Family; package
// catalog creates and tracks them. NewHandle and BindHandle build handles
// for the packages above that cannot name the public type's constructor.
package family
