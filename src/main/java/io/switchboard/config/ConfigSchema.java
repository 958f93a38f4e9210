package io.switchboard.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.json.schema.Draft;
import io.vertx.json.schema.JsonSchema;
import io.vertx.json.schema.JsonSchemaOptions;
import io.vertx.json.schema.OutputFormat;
import io.vertx.json.schema.OutputUnit;
import io.vertx.json.schema.Validator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The config file's shape, as {@code switchboard.schema.json} (beside this class) says it: types,
 * required and unknown keys, enums, ranges, id patterns. A tree that breaks it is a {@link
 * ConfigException} naming the key ({@code agents[1].command}) with a message made from the failing
 * keyword and the schema, never the validator's own text. What a schema cannot say (references
 * between sections, paths on disk, rules that can never match) is {@link SettingsLoader}'s.
 *
 * <p>A key set to null counts as left out (its default applies), as the loader has always read it;
 * an unknown key is refused whatever its value.
 */
final class ConfigSchema {
  /** The schema, in the repository at src/main/resources/io/switchboard/config/ (README, "Configuration"). */
  static final String RESOURCE = "switchboard.schema.json";
  private static final String BASE_URI = "https://switchboard.invalid/";
  /** Read once; each instance parses its own copy (a JsonObject is mutable, a String is not). */
  private static final String TEXT = read();

  /** Keywords that only gather the errors of a subschema: never the error to report while those are there. */
  private static final Set<String> WRAPPERS = Set.of("properties", "patternProperties", "additionalProperties",
      "items", "prefixItems", "$ref", "if", "then", "else", "allOf", "anyOf", "oneOf", "dependentSchemas");

  /** The schema as written, to read keywords from (the validator annotates the copy it is given). */
  private final JsonObject schema = new JsonObject(TEXT);
  private final Validator validator = Validator.create(JsonSchema.of(new JsonObject(TEXT)),
      new JsonSchemaOptions().setDraft(Draft.DRAFT202012).setBaseUri(BASE_URI).setOutputFormat(OutputFormat.Basic));

  private static String read() {
    try (InputStream in = ConfigSchema.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is missing from the class path");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The schema's text, for tests and tools. */
  static String text() {
    return TEXT;
  }

  /** Refuses a tree that breaks the schema, naming the key of its most specific error. */
  void check(JsonObject tree) throws ConfigException {
    Set<List<String>> nulls = new HashSet<>();
    JsonObject shape = withoutNullMembers(tree, List.of(), nulls);
    OutputUnit out = validator.validate(shape);
    if (!out.getValid()) {
      throw report(out.getErrors(), shape, null);
    }
    if (!nulls.isEmpty()) {
      // A declared key set to null is left out; anything else at a null (an unknown key, an
      // environment variable with no value) is still wrong: ask again with the nulls in.
      OutputUnit withNulls = validator.validate(tree);
      if (!withNulls.getValid()) {
        ConfigException e = report(withNulls.getErrors(), tree, nulls);
        if (e != null) {
          throw e;
        }
      }
    }
  }

  /**
   * The exception for the most specific of {@code errors}: the deepest key; then one that holds
   * whatever the if/then/else branches chose; then the schema's own errorMessage; then an unknown
   * key (a misspelt key is also a missing one: the list of known keys shows the slip); then the
   * validator's order. {@code onlyAt}: report only errors at these null members that no declared
   * property covers (null: every error); the result is null when none is left.
   */
  private ConfigException report(List<OutputUnit> errors, Object instance, Set<List<String>> onlyAt) {
    List<OutputUnit> all = errors == null ? List.of() : errors;
    List<Problem> problems = new ArrayList<>();
    for (OutputUnit e : all) {
      if (onlyAt != null && !(onlyAt.contains(segments(e.getInstanceLocation())) && !declared(e))) {
        continue;
      }
      Problem p = problem(e, all, instance);
      if (p != null) {
        problems.add(p);
      }
    }
    if (problems.isEmpty()) {
      if (onlyAt != null) {
        return null;
      }
      // Not expected: every failure has a leaf keyword. Still name where it is (the last error is the innermost).
      OutputUnit innermost = all.isEmpty() ? null : all.get(all.size() - 1);
      String key = innermost == null ? "" : keyPath(innermost.getInstanceLocation(), instance);
      return new ConfigException(key.isEmpty() ? "config" : key, "does not match the configuration's schema"
          + (innermost == null ? "" : ": " + innermost.getError()));
    }
    problems.sort(Comparator.comparingInt((Problem p) -> -depth(p.key))
        .thenComparing(p -> p.conditional)
        .thenComparingInt(p -> p.rank)
        .thenComparingInt(p -> p.order));
    Problem best = problems.get(0);
    return new ConfigException(best.key.isEmpty() ? "config" : best.key, best.message);
  }

  private record Problem(String key, String message, boolean conditional, int rank, int order) {}

  /** Null-valued at a key of {@code properties} (left out), rather than of additionalProperties (unknown). */
  private static boolean declared(OutputUnit e) {
    String at = e.getKeywordLocation();
    return at.lastIndexOf("/properties") > at.lastIndexOf("/additionalProperties");
  }

  /** One error as a key and a message, or null when it only gathers others or repeats one. */
  private Problem problem(OutputUnit e, List<OutputUnit> all, Object instance) {
    String keywordAt = e.getKeywordLocation();
    String keyword = keywordAt.substring(keywordAt.lastIndexOf('/') + 1);
    if (keyword.equals("if")) {
      return null; // "the then branch failed": its own errors say why
    }
    if (WRAPPERS.contains(keyword) && gathersOthers(e, all)) {
      return null;
    }
    JsonObject subschema = subschema(e.getAbsoluteKeywordLocation());
    if (subschema == null) {
      return null;
    }
    String pointer = e.getInstanceLocation();
    Object value = at(instance, pointer);
    String key = keyPath(pointer, instance);
    String custom = subschema.getValue("errorMessage") instanceof String s ? s : null;
    String message;
    switch (keyword) {
      case "additionalProperties" -> {
        List<String> known = known(subschema);
        if (known.contains(lastSegment(pointer))) {
          return null; // the validator also lists a declared key whose value failed here: reported by its own keyword
        }
        message = "unknown key (known here: " + String.join(", ", known) + ")";
      }
      case "properties" -> message = "not allowed here";
      case "required" -> {
        String missing = firstMissing(subschema, value);
        key = key.isEmpty() ? missing : key + "." + missing;
        message = "missing";
      }
      case "type" -> message = typeMessage(subschema, value);
      case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum" -> message = rangeMessage(subschema, value);
      case "enum" -> message = "must be " + alternatives(subschema) + ", got " + describe(value);
      case "const" -> message = "must be " + subschema.getValue("const") + ", got " + describe(value);
      case "pattern" -> message = (subschema.getValue("patternErrorMessage") instanceof String s ? s
          : "must match " + subschema.getString("pattern")) + ", got " + describe(value);
      case "minLength" -> message = subschema.getInteger("minLength") == 1 ? "must be a non-empty string, got \"\""
          : "must be at least " + subschema.getInteger("minLength") + " characters, got " + describe(value);
      case "minItems" -> message = subschema.getInteger("minItems") == 1 ? "must not be empty"
          : "must list at least " + subschema.getInteger("minItems");
      case "minProperties", "maxProperties" -> message = Integer.valueOf(1).equals(subschema.getInteger("minProperties"))
          && Integer.valueOf(1).equals(subschema.getInteger("maxProperties")) ? "must have exactly one key"
          : "has too " + (keyword.equals("minProperties") ? "few" : "many") + " keys";
      default -> message = "does not match the configuration's schema (" + keyword + ")";
    }
    if (custom != null) {
      message = custom;
    }
    boolean conditional = keywordAt.contains("/then/") || keywordAt.contains("/else/")
        || keywordAt.endsWith("/then") || keywordAt.endsWith("/else");
    int rank = custom != null ? 0 : keyword.equals("additionalProperties") ? 1 : 2;
    return new Problem(key, message, conditional, rank, all.indexOf(e));
  }

  /** Whether another error lies inside this one: further along its keywords, at or under its key. */
  private static boolean gathersOthers(OutputUnit e, List<OutputUnit> all) {
    String keywords = e.getKeywordLocation() + "/";
    String instance = e.getInstanceLocation();
    for (OutputUnit other : all) {
      String at = other.getInstanceLocation();
      if (other != e && other.getKeywordLocation().startsWith(keywords)
          && (at.equals(instance) || at.startsWith(instance + "/"))) {
        return true;
      }
    }
    return false;
  }

  /** The schema object holding the keyword at {@code absoluteKeywordLocation} (a URI with a JSON pointer fragment). */
  private JsonObject subschema(String absoluteKeywordLocation) {
    if (absoluteKeywordLocation == null || !absoluteKeywordLocation.contains("#")) {
      return null;
    }
    List<String> path = segments(absoluteKeywordLocation.substring(absoluteKeywordLocation.indexOf('#')));
    if (path.isEmpty()) {
      return null;
    }
    Object node = at(schema, path.subList(0, path.size() - 1));
    return node instanceof JsonObject o ? o : null;
  }

  /** A local {@code {"$ref": "#/..."}} resolved (once), or the schema itself. */
  private Object resolve(Object subschema) {
    if (subschema instanceof JsonObject o && o.getValue("$ref") instanceof String ref && ref.startsWith("#")) {
      Object target = at(schema, segments(ref));
      if (target instanceof JsonObject t) {
        JsonObject merged = t.copy();
        o.forEach(entry -> {
          if (!entry.getKey().equals("$ref")) {
            merged.put(entry.getKey(), entry.getValue());
          }
        });
        return merged;
      }
    }
    return subschema;
  }

  /** The keys an object schema declares (not those it forbids with {@code false}). */
  private static List<String> known(JsonObject objectSchema) {
    List<String> names = new ArrayList<>();
    JsonObject properties = objectSchema.getJsonObject("properties", new JsonObject());
    for (String name : properties.fieldNames()) {
      if (!Boolean.FALSE.equals(properties.getValue(name))) {
        names.add(name);
      }
    }
    return names;
  }

  private static String firstMissing(JsonObject objectSchema, Object value) {
    JsonArray required = objectSchema.getJsonArray("required", new JsonArray());
    for (int i = 0; i < required.size(); i++) {
      if (!(value instanceof JsonObject o) || !o.containsKey(required.getString(i))) {
        return required.getString(i);
      }
    }
    return required.isEmpty() ? "?" : required.getString(0);
  }

  private String typeMessage(JsonObject subschema, Object value) {
    Object type = subschema.getValue("type");
    if (type instanceof JsonArray types) {
      List<String> names = new ArrayList<>();
      for (Object t : types) {
        names.add(article(String.valueOf(t)));
      }
      return "must be " + String.join(" or ", names) + ", got " + describe(value);
    }
    if ("integer".equals(type) || "number".equals(type)) {
      return rangeMessage(subschema, value);
    }
    if ("array".equals(type)) {
      Object items = resolve(subschema.getValue("items"));
      String of = "";
      if (items instanceof JsonObject i && i.getValue("type") instanceof String itemType) {
        of = itemType.equals("string") ? " of strings" : itemType.equals("object") ? " of objects" : "";
      }
      return "must be an array" + of + ", got " + describe(value);
    }
    return "must be " + article(String.valueOf(type)) + ", got " + describe(value);
  }

  private static String article(String type) {
    switch (type) {
      case "string": return "a string";
      case "boolean": return "true or false";
      case "object": return "an object";
      case "array": return "an array";
      case "integer": return "an integer";
      case "number": return "a number";
      default: return type;
    }
  }

  private static String rangeMessage(JsonObject subschema, Object value) {
    String what = "integer".equals(subschema.getValue("type")) ? "an integer" : "a number";
    Object min = subschema.getValue("minimum");
    Object max = subschema.getValue("maximum");
    String range = min != null && max != null ? " " + min + ".." + max
        : min != null ? " of " + min + " or more" : max != null ? " of " + max + " or less" : "";
    return "must be " + what + range + ", got " + describe(value);
  }

  /** {@code a, b or c}, each with its {@code enumDescriptions} entry in parentheses where the schema gives one. */
  private static String alternatives(JsonObject subschema) {
    JsonArray values = subschema.getJsonArray("enum");
    JsonArray descriptions = subschema.getJsonArray("enumDescriptions", new JsonArray());
    List<String> out = new ArrayList<>();
    for (int i = 0; i < values.size(); i++) {
      String d = i < descriptions.size() ? descriptions.getString(i) : null;
      out.add(values.getValue(i) + (d == null ? "" : " (" + d + ")"));
    }
    if (out.size() == 1) {
      return out.get(0);
    }
    return String.join(", ", out.subList(0, out.size() - 1)) + " or " + out.get(out.size() - 1);
  }

  /** A value as a message shows it: strings quoted, objects and arrays by kind. */
  static String describe(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof String s) {
      return "\"" + s + "\"";
    }
    if (v instanceof JsonObject || v instanceof Map) {
      return "an object";
    }
    if (v instanceof JsonArray || v instanceof List) {
      return "an array";
    }
    return String.valueOf(v);
  }

  /**
   * The config's key path of a JSON pointer into {@code root} ({@code #/agents/1/command} is
   * {@code agents[1].command}): a segment is an index where its parent is an array, a key otherwise.
   * The pointer may be a URI fragment ({@code #}, %-escapes); {@code ~1} and {@code ~0} are {@code /} and {@code ~}.
   */
  static String keyPath(String pointer, Object root) {
    StringBuilder out = new StringBuilder();
    Object node = root;
    for (String segment : segments(pointer)) {
      if (node instanceof JsonArray a && segment.matches("\\d+")) {
        out.append('[').append(segment).append(']');
        int i = Integer.parseInt(segment);
        node = i < a.size() ? a.getValue(i) : null;
      } else {
        out.append(out.length() == 0 ? "" : ".").append(segment);
        node = node instanceof JsonObject o ? o.getValue(segment) : null;
      }
    }
    return out.toString();
  }

  /** A JSON pointer's unescaped segments; a leading {@code #} makes it a URI fragment, %-decoded first. */
  static List<String> segments(String pointer) {
    String p = pointer;
    if (p.startsWith("#")) {
      p = percentDecode(p.substring(1));
    }
    List<String> out = new ArrayList<>();
    if (p.isEmpty()) {
      return out;
    }
    for (String raw : p.substring(p.startsWith("/") ? 1 : 0).split("/", -1)) {
      out.add(raw.replace("~1", "/").replace("~0", "~"));
    }
    return out;
  }

  private static String percentDecode(String s) {
    if (s.indexOf('%') < 0) {
      return s;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%' && i + 2 < s.length() && isHex(s, i + 1) && isHex(s, i + 2)) {
        bytes.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
        i += 2;
      } else {
        byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        bytes.write(b, 0, b.length);
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  private static boolean isHex(String s, int i) {
    return Character.digit(s.charAt(i), 16) >= 0;
  }

  private static Object at(Object root, String pointer) {
    return at(root, segments(pointer));
  }

  private static Object at(Object root, List<String> segments) {
    Object node = root;
    for (String segment : segments) {
      if (node instanceof JsonObject o) {
        node = o.getValue(segment);
      } else if (node instanceof JsonArray a && segment.matches("\\d+") && Integer.parseInt(segment) < a.size()) {
        node = a.getValue(Integer.parseInt(segment));
      } else {
        return null;
      }
    }
    return node;
  }

  private static String lastSegment(String pointer) {
    List<String> s = segments(pointer);
    return s.isEmpty() ? "" : s.get(s.size() - 1);
  }

  private static int depth(String keyPath) {
    int n = keyPath.isEmpty() ? 0 : 1;
    for (int i = 0; i < keyPath.length(); i++) {
      if (keyPath.charAt(i) == '.' || keyPath.charAt(i) == '[') {
        n++;
      }
    }
    return n;
  }

  /** A copy without the object members that are null (in arrays a null stays); their paths go to {@code dropped}. */
  private static JsonObject withoutNullMembers(JsonObject o, List<String> at, Set<List<String>> dropped) {
    JsonObject out = new JsonObject();
    for (Map.Entry<String, Object> e : o) {
      List<String> here = child(at, e.getKey());
      if (e.getValue() == null) {
        dropped.add(here);
      } else {
        out.put(e.getKey(), withoutNulls(e.getValue(), here, dropped));
      }
    }
    return out;
  }

  private static Object withoutNulls(Object v, List<String> at, Set<List<String>> dropped) {
    if (v instanceof JsonObject o) {
      return withoutNullMembers(o, at, dropped);
    }
    if (v instanceof JsonArray a) {
      JsonArray out = new JsonArray();
      for (int i = 0; i < a.size(); i++) {
        out.add(withoutNulls(a.getValue(i), child(at, String.valueOf(i)), dropped));
      }
      return out;
    }
    return v;
  }

  private static List<String> child(List<String> path, String segment) {
    List<String> out = new ArrayList<>(path);
    out.add(segment);
    return out;
  }
}
