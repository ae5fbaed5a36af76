// Test support: posts a file with Java's HttpURLConnection, as most Java programs do (the body
// buffered, then sent whole before the answer is read), a number of times, printing for each try
// "<status> <body>" or "error <exception>". Run as a single-file program:
//   java PostFile.java <url> <file> <tries>
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

public class PostFile {
  public static void main(String[] args) throws Exception {
    byte[] body = Files.readAllBytes(Path.of(args[1]));
    int tries = Integer.parseInt(args[2]);
    for (int i = 0; i < tries; i++) {
      try {
        HttpURLConnection connection = (HttpURLConnection) new URL(args[0]).openConnection();
        connection.setRequestMethod("POST");
        connection.setDoOutput(true);
        connection.setRequestProperty("Content-Type", "application/json");
        try (OutputStream out = connection.getOutputStream()) {
          out.write(body);
        }
        int status = connection.getResponseCode();
        InputStream answer = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
        String text = answer == null ? "" : new String(answer.readAllBytes(), StandardCharsets.UTF_8);
        System.out.println(status + " " + text);
      } catch (Exception e) {
        System.out.println("error " + e);
      }
    }
  }
}
