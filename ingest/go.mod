module github.com/vidhost/vidhost/ingest

go 1.22

require github.com/datarhei/gosrt v0.9.0

require (
	github.com/benburkert/openpgp v0.0.0-20160410205803-c2471f86866c // indirect
	golang.org/x/crypto v0.33.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
