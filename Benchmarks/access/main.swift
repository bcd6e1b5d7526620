// SPEC §13's decision, timed in-process through the public API (`bash Benchmarks/run.sh
// access`): 100 rules and a group file of 1,000 groups, the request's groups looked up and
// the rules decided, as `serve` does for every /auth. Prints one line per measure;
// nothing is asserted (Benchmarks/README.md).
import CredFile

#if canImport(Glibc)
import Glibc
#endif

func seconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

// 1,000 groups of 20 members each, over 2,000 users: every user is in about 10 groups.
var groupText = ""
for group in 0..<1000 {
    groupText +=
        "group\(group): " + (0..<20).map { "user\((group * 37 + $0 * 101) % 2000)" }.joined(separator: " ") + "\n"
}
// 100 rules in the shapes of Authelia's and tinyauth's documentation: 98 per-app rules
// (host, path prefixes and regexes, methods, groups, users, networks), then two catch-alls.
var ruleText = "bypass host=status.example.com\n"
for app in 0..<97 {
    switch app % 4 {
    case 0: ruleText += "allow host=app\(app).example.com path=/admin/ group=group\(app * 7)\n"
    case 1: ruleText += "bypass host=app\(app).example.com path=~^/api([/?].*)?$ method=GET\n"
    case 2: ruleText += "deny host=app\(app).example.com network=!10.0.0.0/8 network=!2001:db8::/32\n"
    default: ruleText += "allow host=*.app\(app).example.com user=user\(app) user=user\(app + 1) group=group\(app)\n"
    }
}
ruleText += "two-factor host=vault.example.com\nallow host=*.example.com\n"
let rules = try AccessRules(parsing: Array(ruleText.utf8), source: "bench.rules")
let groups = try GroupFile(parsing: Array(groupText.utf8), source: "bench.htgroup")
precondition(rules.rules.count == 100 && groups.groups.count == 1000)

// Requests that stop early, in the middle, at the last rule, and match none.
let urls = [
    "https://status.example.com/", "https://app49.example.com/api/v1/items?page=2",
    "https://app96.example.com/admin/users", "https://www.example.com/index.html",
    "https://other.example.org/", "https://x.app95.example.com/dashboard",
]
let address = IPAddress(parsing: Array("192.0.2.10".utf8))
var requests: [(String, AccessRequest)] = []
for (index, url) in urls.enumerated() {
    let user = "user\(index * 311 % 2000)"
    requests.append((user, try AccessRequest(url: url, user: user, address: address)))
}

var sink = 0
// The decision alone, and with the user's groups looked up (what serve pays per request).
for withGroups in [false, true] {
    var best = Double.infinity
    let count = 100_000
    for _ in 0..<3 {
        let start = seconds()
        for index in 0..<count {
            var (user, request) = requests[index % requests.count]
            if withGroups { request.groups = groups.groups(of: user) }
            let decision = rules.decide(request)
            sink &+= decision.line ?? 0
        }
        best = min(best, (seconds() - start) / Double(count))
    }
    let what = withGroups ? "decision with the user's groups looked up" : "decision alone"
    let micro = (best * 1e8).rounded() / 100
    print("\(what): \(micro) µs, \(Int(1 / best)) decisions/s (100 rules, 1,000 groups; best of 3 × 100,000)")
}
if sink == 42 { print("") }  // keeps the loop's work
