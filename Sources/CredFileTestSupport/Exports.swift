// One import for the tests: `import CredFileTestSupport` also brings the Foundation-free
// helpers that live below it, shared with the Fuzz/ package (ExternalTool, SeededRandom,
// TemporaryDirectory, HarnessError) and the fuzz checks that FuzzRegressionTests replays.
@_exported import _CredFileFuzzChecks
