// Package.swift declares the CLITests target; SwiftPM refuses to build the package while
// its folder has no source file. The CLI tests themselves belong to the CLI work; this
// file only keeps `swift build` / `swift test` working until they land (delete it then).
