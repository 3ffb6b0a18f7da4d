package main

import (
	"bytes"
	"unicode/utf8"
)

// A key pattern (scan --match, count --match) is a glob over the key's
// text, as redis' SCAN MATCH: '*' matches any run of characters, '?' one
// character, '[abc]', '[a-z]' and '[^a]' one character of a class, and a
// backslash makes the next character literal. A character is a UTF-8
// sequence, or a single byte that is not valid UTF-8 (which only '*' and
// '?' match).

// badRune stands for a byte that is not valid UTF-8: no class holds it.
const badRune = -1

// nextRune decodes the first character of b.
func nextRune(b []byte) (rune, int) {
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError && n <= 1 {
		return badRune, 1
	}
	return r, n
}

// matchGlob reports whether key matches the pattern.
func matchGlob(pattern, key []byte) bool {
	// Iterative matching with one backtrack point for the last '*'.
	var starP, starK = -1, -1
	p, k := 0, 0
	for k < len(key) {
		if p < len(pattern) {
			switch pattern[p] {
			case '*':
				starP, starK = p, k
				p++
				continue
			case '?':
				_, n := nextRune(key[k:])
				p, k = p+1, k+n
				continue
			case '[':
				r, n := nextRune(key[k:])
				if ok, end := matchClass(pattern[p:], r); end > 0 {
					if ok {
						p, k = p+end, k+n
						continue
					}
				} else if key[k] == '[' { // an unclosed '[' is literal
					p, k = p+1, k+1
					continue
				}
			default:
				_, n := literal(pattern[p:])
				lit := pattern[p+n-charLen(pattern[p:], n) : p+n]
				if _, m := nextRune(key[k:]); bytes.Equal(lit, key[k:k+m]) {
					p, k = p+n, k+m
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last '*' take one more character and try again.
		_, n := nextRune(key[starK:])
		starK += n
		p, k = starP+1, starK
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// charLen is the length of the character that ends the n pattern bytes
// literal took (n, or n-1 after a backslash).
func charLen(pattern []byte, n int) int {
	if pattern[0] == '\\' && n > 1 {
		return n - 1
	}
	return n
}

// literal returns the literal character at the start of pattern (after a
// backslash, the escaped one) and how many pattern bytes it took.
func literal(pattern []byte) (rune, int) {
	if pattern[0] == '\\' && len(pattern) > 1 {
		r, n := nextRune(pattern[1:])
		return r, n + 1
	}
	return nextRune(pattern)
}

// matchClass matches r against the class that starts pattern ('['); end
// is the length of the class in the pattern, 0 if it is not closed.
func matchClass(pattern []byte, r rune) (ok bool, end int) {
	i := 1
	negate := i < len(pattern) && (pattern[i] == '^' || pattern[i] == '!')
	if negate {
		i++
	}
	first := true
	for i < len(pattern) {
		if pattern[i] == ']' && !first {
			return ok != negate && r != badRune, i + 1
		}
		first = false
		lo, n := literal(pattern[i:])
		i += n
		hi := lo
		if i+1 < len(pattern) && pattern[i] == '-' && pattern[i+1] != ']' {
			hi, n = literal(pattern[i+1:])
			i += 1 + n
		}
		if lo <= r && r <= hi && r != badRune {
			ok = true
		}
	}
	return false, 0
}

// globPrefix is the literal start of pattern, before its first wildcard: a
// scan for the pattern can be limited to keys with that prefix.
func globPrefix(pattern []byte) []byte {
	var out []byte
	for i := 0; i < len(pattern); {
		switch pattern[i] {
		case '*', '?', '[':
			return out
		case '\\':
			if i+1 < len(pattern) {
				out = append(out, pattern[i+1])
				i += 2
				continue
			}
		}
		out = append(out, pattern[i])
		i++
	}
	return out
}
