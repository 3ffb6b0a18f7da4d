package main

// cheapKDF keeps the tests fast: Argon2id at the smallest cost it takes
// (the default costs 64 MiB and about 0.2 s at every open).
var cheapKDF = []string{"--kdf", "time=1,memory=8KiB,threads=1"}

// marker is a value whose bytes must not be found in an encrypted file.
const marker = "MARKER-VALUE-in-the-clear-0123456789"
