// Placeholder so the CredFileTests target has a source file on the cli-tests branch
// (Package.swift declares the target; its tests live on other branches). Delete at merge.
