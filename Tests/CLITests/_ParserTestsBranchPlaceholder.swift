// Placeholder so the CLITests target has a source file on the parser-tests branch
// (Package.swift declares the target; its tests live on other branches). Delete at merge.
