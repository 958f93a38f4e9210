package io.switchboard.cli;

import io.switchboard.config.SettingsLoader.Override;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The parsed command line: which subcommand, the setting overrides given as flags, and the
 * subcommands' own options ({@code token --rotate}; {@code ledger --json --state S --limit N};
 * {@code policy check} and {@code cluster ca|cert} options in {@code options}, {@code cluster}'s
 * action in {@code action}).
 */
public record CommandLine(Command command, boolean rotate, Map<Override, String> flags, boolean json,
                          String state, int limit, boolean verify, Map<String, String> options, String action) {

  public enum Command { SERVE, TOKEN, DOCTOR, LEDGER, POLICY, CLUSTER, HELP, VERSION }

  /** The options of {@code cluster ca} and {@code cluster cert}. */
  static final java.util.Set<String> CLUSTER_OPTIONS = java.util.Set.of("dir", "ca", "name", "address", "out", "days");

  /** The options of {@code policy check}: the tool call to try against the rules. */
  static final java.util.Set<String> POLICY_OPTIONS = java.util.Set.of("agent", "project", "thread", "kind", "title",
      "command", "path", "url", "cwd");

  public static final String USAGE = """
      Usage: java -jar switchboard.jar [serve] [options]
             java -jar switchboard.jar token [--rotate] [options]
             java -jar switchboard.jar doctor [options]
             java -jar switchboard.jar ledger [--state pending|all] [--limit N] [--json] [options]
             java -jar switchboard.jar ledger verify [options]
             java -jar switchboard.jar policy check [--kind K] [--command C] [--path P] [...] [options]
             java -cp 'switchboard.jar:cluster/*' io.switchboard.Main cluster ca [--dir D]
             java -cp 'switchboard.jar:cluster/*' io.switchboard.Main cluster cert --name N --address A
                  [--ca D] [--out D] [--days N]
             java -jar switchboard.jar --help | --version

      Switchboard drives ACP coding agents from a browser chat and IM apps, and lets you
      approve or deny their tool calls from whichever surface is at hand.

      Subcommands:
        serve              run the gateway (the default)
        token              make the access token and print it, once (the data directory keeps
                           only its hash; exits 1 when a token exists: use --rotate)
        token --rotate     replace the access token with a new one, printed once (restart a
                           running gateway)
        doctor             check Java, the data directory, the database, the configured agent
                           and plugin commands, the agents' sandbox, and the port; exit 1 if
                           anything is wrong
        ledger             list permission requests and how they ended, newest first
                           (--state pending|all, default all; --limit N, default 50; --json);
                           safe while the gateway runs
        ledger verify      check the ledger's hash chain; name the first broken link and exit 1
        policy check       which rule would answer a tool call: [--kind K] (execute, read, fetch, ...;
                           left out: a call whose agent gave none) [--agent A] [--project P] [--command "git push"] [--path F] [--url U]
                           [--title T] [--thread T] [--cwd DIR: the thread's directory paths are read in]
        cluster ca         make the cluster's certificate authority in --dir (default cluster-ca): ca.crt,
                           and ca.key (0600) to keep on this machine only
        cluster cert       issue a node its key and certificate for its name (cluster.node) and address
                           (cluster.host), from the authority in --ca (default cluster-ca), written with
                           ca.crt to --out (default cluster-certs/NAME): copy that folder to the node's
                           DATA_DIR/cluster-tls; --days N (default 397)

      Options (each also SWITCHBOARD_<NAME> in the environment and a key in the config file):
        --config FILE      configuration file (default: conf/switchboard.json if present)
        --data-dir DIR     where the database, token and workspaces live (default: ./data)
        --host H           address to listen on (default: 127.0.0.1)
        --port N           port to listen on; 0 picks a free one and prints it (default: 8080)
        --log-format F     text or json (default: text)

      Exit codes: 0 clean stop, 2 bad usage or configuration, 1 anything else.
      """;

  /** Parses argv; a {@link UsageException} names the argument that is wrong. */
  public static CommandLine parse(List<String> args) throws UsageException {
    Command command = null;
    boolean rotate = false;
    boolean json = false;
    String state = null;
    Integer limit = null;
    boolean verify = false;
    Map<Override, String> flags = new EnumMap<>(Override.class);
    Map<String, String> policy = new java.util.LinkedHashMap<>();
    boolean check = false;
    String action = null;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (arg.equals("--help") || arg.equals("-h")) {
        return new CommandLine(Command.HELP, false, flags, false, "all", 50, false, Map.of(), null);
      }
      if (arg.equals("--version") || arg.equals("-V")) {
        return new CommandLine(Command.VERSION, false, flags, false, "all", 50, false, Map.of(), null);
      }
      if (arg.equals("--rotate")) {
        rotate = true;
        continue;
      }
      if (arg.equals("--json")) {
        json = true;
        continue;
      }
      if (arg.startsWith("--")) {
        String name = arg.substring(2);
        String value = null;
        int eq = name.indexOf('=');
        if (eq >= 0) {
          value = name.substring(eq + 1);
          name = name.substring(0, eq);
        }
        Override o = Override.byFlag(name);
        boolean policyOption = command == Command.POLICY && POLICY_OPTIONS.contains(name)
            || command == Command.CLUSTER && CLUSTER_OPTIONS.contains(name);
        if (o == null && !name.equals("state") && !name.equals("limit") && !policyOption) {
          throw new UsageException("--" + name, "unknown option");
        }
        if (value == null) {
          if (i + 1 >= args.size() || args.get(i + 1).startsWith("--")) {
            throw new UsageException(arg, "needs a value");
          }
          value = args.get(++i);
        }
        if (policyOption) {
          if (policy.put(name, value) != null) {
            throw new UsageException("--" + name, "given twice");
          }
          continue;
        }
        if (name.equals("state")) {
          if (!value.equals("pending") && !value.equals("all")) {
            throw new UsageException("--state", "must be pending or all, got \"" + value + "\"");
          }
          state = value;
          continue;
        }
        if (name.equals("limit")) {
          try {
            limit = Integer.parseInt(value);
          } catch (NumberFormatException e) {
            limit = -1;
          }
          if (limit < 1 || limit > 10_000) {
            throw new UsageException("--limit", "must be a number 1..10000, got \"" + value + "\"");
          }
          continue;
        }
        if (flags.containsKey(o)) {
          throw new UsageException("--" + name, "given twice");
        }
        flags.put(o, value);
        continue;
      }
      if (command == Command.POLICY && arg.equals("check") && !check) {
        check = true;
        continue;
      }
      if (command == Command.CLUSTER && (arg.equals("ca") || arg.equals("cert")) && action == null) {
        action = arg;
        continue;
      }
      if (command == Command.LEDGER && arg.equals("verify") && !verify) {
        verify = true;
        continue;
      }
      if (command != null) {
        throw new UsageException(arg, "unexpected argument");
      }
      command = switch (arg) {
        case "serve" -> Command.SERVE;
        case "token" -> Command.TOKEN;
        case "doctor" -> Command.DOCTOR;
        case "ledger" -> Command.LEDGER;
        case "policy" -> Command.POLICY;
        case "cluster" -> Command.CLUSTER;
        default -> throw new UsageException(arg, "unknown subcommand (known: serve, token, doctor, ledger, policy, "
            + "cluster)");
      };
    }
    if (command == null) {
      command = Command.SERVE;
    }
    if (rotate && command != Command.TOKEN) {
      throw new UsageException("--rotate", "only goes with the token subcommand");
    }
    if ((json || state != null || limit != null) && command != Command.LEDGER) {
      throw new UsageException(json ? "--json" : state != null ? "--state" : "--limit",
          "only goes with the ledger subcommand");
    }
    if (verify && (json || state != null || limit != null)) {
      throw new UsageException(json ? "--json" : state != null ? "--state" : "--limit", "does not go with ledger verify");
    }
    if (command == Command.POLICY && !check) {
      throw new UsageException("policy", "usage: policy check [--kind K] [--agent A] [--project P] [--command C] "
          + "[--path P] [--url U] [--title T] [--thread T] [--cwd DIR]");
    }
    if (command == Command.CLUSTER) {
      checkCluster(action, policy);
    }
    return new CommandLine(command, rotate, flags, json, state == null ? "all" : state, limit == null ? 50 : limit,
        verify, Map.copyOf(policy), action);
  }

  private static void checkCluster(String action, Map<String, String> o) throws UsageException {
    if (action == null) {
      throw new UsageException("cluster", "usage: cluster ca [--dir D] | cluster cert --name N --address A [--ca D] "
          + "[--out D] [--days N]");
    }
    java.util.Set<String> allowed = action.equals("ca") ? java.util.Set.of("dir")
        : java.util.Set.of("ca", "name", "address", "out", "days");
    for (String given : o.keySet()) {
      if (!allowed.contains(given)) {
        throw new UsageException("--" + given, "does not go with cluster " + action);
      }
    }
    if (action.equals("cert")) {
      for (String needed : java.util.List.of("name", "address")) {
        if (!o.containsKey(needed)) {
          throw new UsageException("cluster cert", "needs --" + needed);
        }
      }
      if (!o.get("name").matches("[A-Za-z0-9][A-Za-z0-9._-]{0,63}")) {
        throw new UsageException("--name", "must be the node's name as in cluster.node (letters, digits, . _ -; "
            + "at most 64), got \"" + o.get("name") + "\"");
      }
      if (!o.get("address").matches("[A-Za-z0-9.-]{1,253}|\\[?[0-9A-Fa-f:.]+]?")) {
        throw new UsageException("--address", "must be the node's cluster.host (an IP address or a host name), got \""
            + o.get("address") + "\"");
      }
      if (o.containsKey("days")) {
        int days;
        try {
          days = Integer.parseInt(o.get("days"));
        } catch (NumberFormatException e) {
          days = -1;
        }
        if (days < 1 || days > 3650) {
          throw new UsageException("--days", "must be a number 1..3650, got \"" + o.get("days") + "\"");
        }
      }
    }
  }
}
