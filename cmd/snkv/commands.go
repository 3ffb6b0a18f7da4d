package main

import "github.com/spf13/cobra"

// Every command of snkv is registered here, and only here: each one lives
// in its own file, cmd_NAME.go, with its tests beside it in
// cmd_NAME_test.go. A new command is one new file and one line below.

// The help's groups of commands.
const (
	groupRead  = "read"  // commands that open the store read-only
	groupWrite = "write" // commands that write
)

// keyFlags are the global flags of a command that names keys of one
// column family.
const keyFlags = "cf,json,hex,base64"

// registration is one command of snkv: the function that builds it, the
// help group it is listed under (none for a group of subcommands, which
// registers the flags of each of its subcommands itself), and the global
// flags it takes (see takes; the others are refused).
type registration struct {
	build func(*app) *cobra.Command
	group string
	flags string
}

// commands returns the commands of snkv, in the order of the help. (A
// function, not a variable: the shell command builds the others.)
func commands() []registration {
	return []registration{
		{(*app).lsCommand, groupRead, "json,escape,no-header"},
		{(*app).getCommand, groupRead, keyFlags + ",escape,no-header"},
		{(*app).existsCommand, groupRead, keyFlags + ",escape,no-header"},
		{(*app).ttlCommand, groupRead, keyFlags},
		{(*app).scanCommand, groupRead, keyFlags + ",escape,no-header"},
		{(*app).countCommand, groupRead, keyFlags},
		{(*app).statsCommand, groupRead, "json"},
		{(*app).checkCommand, groupRead, "json"},
		{(*app).exportCommand, groupRead, keyFlags},
		{(*app).backupCommand, groupRead, "json,no-header"},
		{(*app).watchCommand, groupRead, "cf,hex,base64"},
		{(*app).consumersCommand, groupRead, "json,no-header"},

		{(*app).putCommand, groupWrite, keyFlags + ",adopt,max-value-size"},
		{(*app).delCommand, groupWrite, keyFlags},
		{(*app).expireCommand, groupWrite, keyFlags},
		{(*app).persistCommand, groupWrite, keyFlags},
		{(*app).purgeCommand, groupWrite, "cf,json,escape,no-header"},
		{(*app).checkpointCommand, groupWrite, "json,no-header"},
		{(*app).vacuumCommand, groupWrite, "json,no-header"},
		{(*app).importCommand, groupWrite, "cf,json,escape,adopt,max-value-size,no-header"},
		{(*app).repairCommand, groupWrite, "json"},
		{(*app).upgradeCommand, groupWrite, "json"},
		{(*app).encryptCommand, groupWrite, "json"},
		{(*app).rekeyCommand, groupWrite, "json"},
		{(*app).decryptCommand, groupWrite, "json"},

		{(*app).cfCommand, "", ""},
		{(*app).timelogCommand, "", ""},
		{(*app).vecCommand, "", ""},
		{(*app).shellCommand, "", ""},
	}
}
